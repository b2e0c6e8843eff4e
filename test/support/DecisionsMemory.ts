import { Layer, Redacted } from "effect"
import { WebhookSenderHttp } from "../../adapters/http/WebhookSenderHttp.ts"
import { RecordUpdaterMemory } from "../../adapters/memory/decisions/RecordUpdaterMemory.ts"
import {
  DecisionsDataMemory,
  DecisionsUseCases,
  type DecisionsSettings
} from "../../apps/server/decisions/DecisionsLayers.ts"
import { actionRetryPolicy } from "../../core/decisions/ActionMachine.ts"
import type { RecordUpdater } from "../../core/decisions/RecordUpdater.ts"
import { Webhooks } from "../../core/decisions/Webhooks.ts"

export const testSecretsKey = Redacted.make("test-secrets-key")

/** The secrets key of every service in tests: it also seals the responses kept for replays. */
export const testServiceSecretsKey = Redacted.make("test-service-secrets-key-0123456789")

/** A fast retry schedule (seconds) for tests of the webhook outbox. */
export const testRetrySchedule = [0.05, 0.1, 0.2, 0.3]

/**
 * The decisions service as tests run it: a fixed sealing key, http to loopback allowed, a fast retry schedule
 * for webhooks and record actions, short webhook attempts.
 */
export const testDecisionsSettings: DecisionsSettings = {
  secretsKey: testSecretsKey,
  allowLoopbackHttp: true,
  webhookRetrySchedule: testRetrySchedule,
  webhookTimeoutMs: 500,
  recordActionRetryPolicy: actionRetryPolicy({ maxAttempts: 3, firstSeconds: 0.05, maxSeconds: 0.05 })
}

/** Webhooks as tests run them (for stacks that wire the use cases themselves). */
export const testWebhooks = Webhooks.layer({ secretsKey: testSecretsKey, allowLoopbackHttp: true })

/**
 * The adapters out of the process as tests run them: the memory record updater (override it to talk to the
 * record-store stand-in) and real HTTP deliveries to loopback.
 */
export const testOutbound = (updater: Layer.Layer<RecordUpdater, never, never> = RecordUpdaterMemory) => ({
  recordUpdater: updater,
  webhookSender: WebhookSenderHttp({ allowLoopback: true })
})

/**
 * The decisions use cases over the memory adapters (also provided, for inspection), fresh per build; record
 * actions go through `updater`.
 */
export const decisionsMemory = (updater?: Layer.Layer<RecordUpdater, never, never>) =>
  DecisionsUseCases(testDecisionsSettings, { data: DecisionsDataMemory, ...testOutbound(updater) })

export const DecisionsMemory = decisionsMemory()
