import { Layer, Redacted } from "effect"
import { Webhooks } from "../../core/decisions/Webhooks.ts"
import { WebhookStoreMemory } from "../../adapters/memory/decisions/WebhookStoreMemory.ts"
import { Decisions } from "../../core/decisions/Decisions.ts"
import { Templates } from "../../core/decisions/Templates.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"
import { CallerKeyStoreMemory } from "../../adapters/memory/decisions/CallerKeyStoreMemory.ts"
import { DecisionSignalsMemory } from "../../adapters/memory/decisions/DecisionSignalsMemory.ts"
import { DecisionStoreMemory } from "../../adapters/memory/decisions/DecisionStoreMemory.ts"
import { RoleStoreMemory } from "../../adapters/memory/decisions/RoleStoreMemory.ts"
import { TemplateStoreMemory } from "../../adapters/memory/decisions/TemplateStoreMemory.ts"

/** The decisions use cases over the memory adapters (also provided, for inspection), fresh per build. */
/** Webhooks as tests run them: a fixed sealing key, http to loopback allowed. */
export const testWebhooks = Webhooks.layer({ secretsKey: Redacted.make("test-secrets-key"), allowLoopbackHttp: true })

export const DecisionsMemory = Layer.merge(Templates.layer, testWebhooks).pipe(
  Layer.provideMerge(Decisions.layer),
  Layer.provideMerge(
    Layer.mergeAll(
      DecisionStoreMemory,
      RoleStoreMemory,
      CallerKeyStoreMemory,
      DecisionSignalsMemory,
      TemplateStoreMemory,
      WebhookStoreMemory,
      IdGeneratorUlid
    )
  )
)
