import { Layer, Redacted } from "effect"
import { WebhookSenderHttp } from "../../adapters/http/WebhookSenderHttp.ts"
import { CallerKeyStoreMemory } from "../../adapters/memory/decisions/CallerKeyStoreMemory.ts"
import { DecisionSignalsMemory } from "../../adapters/memory/decisions/DecisionSignalsMemory.ts"
import { DecisionStoreMemory } from "../../adapters/memory/decisions/DecisionStoreMemory.ts"
import { McpSessionStoreMemory } from "../../adapters/memory/decisions/McpSessionStoreMemory.ts"
import { RecordStoreCredentialsMemory } from "../../adapters/memory/decisions/RecordStoreCredentialsMemory.ts"
import { RecordUpdaterMemory } from "../../adapters/memory/decisions/RecordUpdaterMemory.ts"
import { RoleStoreMemory } from "../../adapters/memory/decisions/RoleStoreMemory.ts"
import { TemplateStoreMemory } from "../../adapters/memory/decisions/TemplateStoreMemory.ts"
import { WebhookStoreMemory } from "../../adapters/memory/decisions/WebhookStoreMemory.ts"
import { OrganizationAdminsMemory } from "../../adapters/memory/decisions/OrganizationAdminsMemory.ts"
import { ProducerOutboxMemory } from "../../adapters/memory/ProducerOutboxMemory.ts"
import { Decisions } from "../../core/decisions/Decisions.ts"
import { RecordActions } from "../../core/decisions/RecordActions.ts"
import type { RecordUpdater } from "../../core/decisions/RecordUpdater.ts"
import { Templates } from "../../core/decisions/Templates.ts"
import { DecisionPages } from "../../core/decisions/pages/DecisionPages.ts"
import { WebhookDeliveries } from "../../core/decisions/WebhookDeliveries.ts"
import { Webhooks } from "../../core/decisions/Webhooks.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"
import { TransactionsMemory } from "../../adapters/memory/TransactionsMemory.ts"

export const testSecretsKey = Redacted.make("test-secrets-key")

/** The secrets key of every service in tests: it also seals the responses kept for replays. */
export const testServiceSecretsKey = Redacted.make("test-service-secrets-key-0123456789")

/** Webhooks as tests run them: a fixed sealing key, http to loopback allowed. */
export const testWebhooks = Webhooks.layer({ secretsKey: testSecretsKey, allowLoopbackHttp: true })

/** A fast retry schedule (seconds) for tests of the webhook outbox. */
export const testRetrySchedule = [0.05, 0.1, 0.2, 0.3]

/**
 * Record actions and webhook deliveries as tests run them: the memory record updater (override it to talk
 * to the record-store stand-in), real HTTP deliveries to loopback, a fast retry schedule.
 */
export const testWorkers = (updater: Layer.Layer<RecordUpdater, never, never> = RecordUpdaterMemory) =>
  Layer.merge(
    RecordActions.layer({ secretsKey: testSecretsKey, retryPolicy: { maxAttempts: 3, delayMs: () => 50 } }),
    WebhookDeliveries.layer({ secretsKey: testSecretsKey, retrySchedule: testRetrySchedule, timeoutMs: 500 })
  ).pipe(Layer.provide(Layer.merge(updater, WebhookSenderHttp({ allowLoopback: true }))))

/**
 * The decisions use cases over the memory adapters (also provided, for inspection), fresh per build; record
 * actions go through `updater`.
 */
export const decisionsMemory = (updater?: Layer.Layer<RecordUpdater, never, never>) =>
  DecisionPages.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(Templates.layer, testWebhooks, testWorkers(updater))),
    Layer.provideMerge(Decisions.layer),
    Layer.provideMerge(
      Layer.mergeAll(
        DecisionStoreMemory,
        RoleStoreMemory,
        CallerKeyStoreMemory,
        DecisionSignalsMemory.pipe(Layer.provideMerge(TransactionsMemory)),
        TemplateStoreMemory,
        WebhookStoreMemory,
        RecordStoreCredentialsMemory,
        ProducerOutboxMemory,
        OrganizationAdminsMemory,
        McpSessionStoreMemory,
        IdGeneratorUlid
      )
    )
  )

export const DecisionsMemory = decisionsMemory()
