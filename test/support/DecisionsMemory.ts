import { Layer } from "effect"
import { Decisions } from "../../core/decisions/Decisions.ts"
import { Templates } from "../../core/decisions/Templates.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"
import { CallerKeyStoreMemory } from "../../adapters/memory/decisions/CallerKeyStoreMemory.ts"
import { DecisionSignalsMemory } from "../../adapters/memory/decisions/DecisionSignalsMemory.ts"
import { DecisionStoreMemory } from "../../adapters/memory/decisions/DecisionStoreMemory.ts"
import { RoleStoreMemory } from "../../adapters/memory/decisions/RoleStoreMemory.ts"
import { TemplateStoreMemory } from "../../adapters/memory/decisions/TemplateStoreMemory.ts"

/** The decisions use cases over the memory adapters (also provided, for inspection), fresh per build. */
export const DecisionsMemory = Templates.layer.pipe(
  Layer.provideMerge(Decisions.layer),
  Layer.provideMerge(
    Layer.mergeAll(
      DecisionStoreMemory,
      RoleStoreMemory,
      CallerKeyStoreMemory,
      DecisionSignalsMemory,
      TemplateStoreMemory,
      IdGeneratorUlid
    )
  )
)
