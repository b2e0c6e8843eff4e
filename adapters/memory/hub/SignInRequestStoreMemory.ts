import { Effect, Layer } from "effect"
import { makeWakeup } from "../../../core/hub/EventWakeup.ts"
import { SignInRequestStore, type SignInRequest } from "../../../core/hub/SignInRequestStore.ts"
import { Transactions } from "../../../core/kernel/Transactions.ts"

/** The SignInRequestStore port in memory (one process): an addition wakes the worker once its unit commits. */
export const SignInRequestStoreMemory: Layer.Layer<SignInRequestStore, never, Transactions> = Layer.effect(
  SignInRequestStore,
  Effect.gen(function* () {
    const transactions = yield* Transactions
    const added = yield* makeWakeup
    const rows = new Map<string, SignInRequest>()
    return SignInRequestStore.of({
      add: (request) =>
        Effect.andThen(
          Effect.sync(() => void rows.set(request.id, { ...request })),
          transactions.afterCommit(added.wake)
        ),
      takeOldest: () =>
        Effect.sync(() => {
          const oldest = [...rows.keys()].sort()[0]
          if (oldest === undefined) return undefined
          const request = rows.get(oldest)!
          rows.delete(oldest)
          return request
        }),
      awaitAdded: added.sleep,
      pendingCount: () => Effect.sync(() => rows.size)
    })
  })
)
