import { Layer, type Redacted } from "effect"
import { CallerKeyStoreMemory } from "../../../adapters/memory/decisions/CallerKeyStoreMemory.ts"
import { DecisionSignalsMemory } from "../../../adapters/memory/decisions/DecisionSignalsMemory.ts"
import { DecisionStoreMemory } from "../../../adapters/memory/decisions/DecisionStoreMemory.ts"
import { FlowStatsMemory } from "../../../adapters/memory/decisions/FlowStatsMemory.ts"
import { McpSessionStoreMemory } from "../../../adapters/memory/decisions/McpSessionStoreMemory.ts"
import { OrganizationAdminsMemory } from "../../../adapters/memory/decisions/OrganizationAdminsMemory.ts"
import { RecordStoreCredentialsMemory } from "../../../adapters/memory/decisions/RecordStoreCredentialsMemory.ts"
import { RoleStoreMemory } from "../../../adapters/memory/decisions/RoleStoreMemory.ts"
import { TemplateStoreMemory } from "../../../adapters/memory/decisions/TemplateStoreMemory.ts"
import { WebhookStoreMemory } from "../../../adapters/memory/decisions/WebhookStoreMemory.ts"
import { AnswerLinkUsesMemory } from "../../../adapters/memory/decisions/AnswerLinkUsesMemory.ts"
import { OrganizationStatusesMemory } from "../../../adapters/memory/OrganizationStatusesMemory.ts"
import { ProducerOutboxMemory } from "../../../adapters/memory/ProducerOutboxMemory.ts"
import { TransactionsMemory } from "../../../adapters/memory/TransactionsMemory.ts"
import type { RetryPolicy } from "../../../core/kernel/RetryPolicy.ts"
import { CallerAuthentication } from "../../../core/decisions/CallerAuthentication.ts"
import { DecisionFlow } from "../../../core/decisions/DecisionFlow.ts"
import { Decisions } from "../../../core/decisions/Decisions.ts"
import { AnswerByLink } from "../../../core/decisions/AnswerByLink.ts"
import { AnswerLinkSettings } from "../../../core/decisions/AnswerLinks.ts"
import { DecisionPages } from "../../../core/decisions/pages/DecisionPages.ts"
import { Escalations } from "../../../core/decisions/Escalations.ts"
import { RecordActions } from "../../../core/decisions/RecordActions.ts"
import type { RecordUpdater } from "../../../core/decisions/RecordUpdater.ts"
import { Templates } from "../../../core/decisions/Templates.ts"
import { WebhookDeliveries } from "../../../core/decisions/WebhookDeliveries.ts"
import type { WebhookSender } from "../../../core/decisions/WebhookSender.ts"
import { Webhooks } from "../../../core/decisions/Webhooks.ts"
import { IdGeneratorUlid } from "../../../core/kernel/Ids.ts"

/**
 * Every port of the decisions service in memory, fresh per build, units of work included: tests, demos and
 * embedding without a database. The SQL counterpart is `DecisionsDataSql` (DecisionsData.ts).
 */
export const DecisionsDataMemory = Layer.mergeAll(
  Layer.provideMerge(FlowStatsMemory, DecisionStoreMemory),
  RoleStoreMemory,
  CallerKeyStoreMemory,
  DecisionSignalsMemory.pipe(Layer.provideMerge(TransactionsMemory)),
  TemplateStoreMemory,
  WebhookStoreMemory,
  RecordStoreCredentialsMemory,
  ProducerOutboxMemory,
  OrganizationAdminsMemory,
  McpSessionStoreMemory,
  OrganizationStatusesMemory,
  AnswerLinkUsesMemory
)

export interface DecisionsSettings {
  /** Seals webhook signing secrets and record-store tokens. Unset: both are refused (NotConfigured). */
  readonly secretsKey: Redacted.Redacted<string> | undefined
  /** Webhook endpoints on http to loopback (outside production). */
  readonly allowLoopbackHttp: boolean
  /** Seconds before each webhook retry; the service's default schedule when unset. */
  readonly webhookRetrySchedule?: ReadonlyArray<number> | undefined
  /** Per webhook attempt; 10 s when unset. */
  readonly webhookTimeoutMs?: number | undefined
  /** How record actions are retried; the action machine's default when unset. */
  readonly recordActionRetryPolicy?: RetryPolicy | undefined
  /** Answer links in notifications (core/decisions/AnswerLinks.ts); unset, notifications carry none. */
  readonly answerLinks?: { readonly baseUrl: string; readonly secretsKey: string } | undefined
}

/** What the decisions use cases run over: the data ports, and the two ways out of the process. */
export interface DecisionsAdapters<Data, E, R, UE = never, UR = never> {
  /** The data ports and units of work: `DecisionsDataMemory`, or `DecisionsDataSql` with `TransactionsSql`. */
  readonly data: Layer.Layer<Data, E, R>
  /** Performs record actions (the upstream record store). */
  readonly recordUpdater: Layer.Layer<RecordUpdater, UE, UR>
  /** Posts webhook deliveries. */
  readonly webhookSender: Layer.Layer<WebhookSender>
}

/**
 * The decisions service's use cases, the one composition the bundled server, the tests and embedders use:
 * `Decisions`, `Templates`, `Webhooks`, the record-action and webhook-delivery workers, the flow of decisions
 * (`DecisionFlow`) and the pages plane,
 * over the adapters given (also provided, for inspection and for the routes' own needs).
 */
export const DecisionsUseCases = <Data, E, R, UE = never, UR = never>(
  settings: DecisionsSettings,
  adapters: DecisionsAdapters<Data, E, R, UE, UR>
) => {
  const webhooks = Webhooks.layer({ secretsKey: settings.secretsKey, allowLoopbackHttp: settings.allowLoopbackHttp })
  const workers = Layer.merge(
    RecordActions.layer({ secretsKey: settings.secretsKey, retryPolicy: settings.recordActionRetryPolicy }),
    WebhookDeliveries.layer({
      secretsKey: settings.secretsKey,
      retrySchedule: settings.webhookRetrySchedule,
      timeoutMs: settings.webhookTimeoutMs
    })
  ).pipe(Layer.provide(Layer.merge(adapters.recordUpdater, adapters.webhookSender)))
  return DecisionPages.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(Templates.layer, webhooks, workers, DecisionFlow.layer, Escalations.layer, AnswerByLink.layer)
    ),
    Layer.provideMerge(Layer.merge(Decisions.layer, CallerAuthentication.layer)),
    Layer.provideMerge(
      Layer.mergeAll(adapters.data, IdGeneratorUlid, Layer.succeed(AnswerLinkSettings, settings.answerLinks))
    )
  )
}
