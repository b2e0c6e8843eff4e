import { Layer } from "effect"
import { Decisions } from "../../core/decisions/Decisions.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"
import { CallerKeyStoreMemory } from "../../adapters/memory/decisions/CallerKeyStoreMemory.ts"
import { DecisionSignalsMemory } from "../../adapters/memory/decisions/DecisionSignalsMemory.ts"
import { DecisionStoreMemory } from "../../adapters/memory/decisions/DecisionStoreMemory.ts"
import { RoleStoreMemory } from "../../adapters/memory/decisions/RoleStoreMemory.ts"

/** The decisions use cases over the memory adapters (also provided, for inspection), fresh per build. */
export const DecisionsMemory = Decisions.layer.pipe(
  Layer.provideMerge(
    Layer.mergeAll(DecisionStoreMemory, RoleStoreMemory, CallerKeyStoreMemory, DecisionSignalsMemory, IdGeneratorUlid)
  )
)
