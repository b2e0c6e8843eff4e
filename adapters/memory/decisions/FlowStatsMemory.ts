import { Effect, Layer } from "effect"
import { DecisionStore } from "../../../core/decisions/DecisionStore.ts"
import { flowOf } from "../../../core/decisions/FlowRules.ts"
import { FlowStatsStore } from "../../../core/decisions/FlowStats.ts"

/**
 * The flow of decisions over the memory decision store: every decision of the organization, read through
 * the store's own list, counted by the pure rules (core/decisions/FlowRules.ts). Provide it with the same
 * DecisionStoreMemory the use cases write to.
 */
export const FlowStatsMemory: Layer.Layer<FlowStatsStore, never, DecisionStore> = Layer.effect(
  FlowStatsStore,
  Effect.gen(function* () {
    const decisions = yield* DecisionStore
    return FlowStatsStore.of({
      read: (window) =>
        Effect.map(
          decisions.list({
            organizationId: window.organizationId,
            scope: { _tag: "All" },
            nowIso: window.nowIso,
            limit: Number.MAX_SAFE_INTEGER
          }),
          (all) => flowOf(all, window)
        )
    })
  })
)
