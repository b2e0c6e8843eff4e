import { Deferred, Effect, Exit, type Scope } from "effect"

export interface AirtableBatcherOptions<A, B, E> {
  /** Sends `items` in one request and answers one result per item, in their order. */
  readonly send: (items: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<B>, E>
  /** Whether a failed batch may be sent again item by item (nothing of it was made: a 4xx answer), so a bad item fails alone. */
  readonly splittable: (error: E) => boolean
  /** At most this many items in one request. Default 10 (Airtable's limit for writes). */
  readonly maxBatch?: number | undefined
}

interface Member<A, B, E> {
  readonly item: A
  readonly answer: Deferred.Deferred<B, E>
}

/**
 * Requests of one kind gathered into batches: the items that arrive while a batch is being sent (or in the same
 * moment as the first) go together in the next one, up to `maxBatch` each, so 50 updates made at once are five
 * requests, and a lone item goes at once. One batch of a batcher is sent at a time.
 */
export const makeAirtableBatcher = <A, B, E>(
  options: AirtableBatcherOptions<A, B, E>
): Effect.Effect<(item: A) => Effect.Effect<B, E>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const maxBatch = Math.max(1, options.maxBatch ?? 10)
    const pending: Array<Member<A, B, E>> = []
    let running = false

    const settle = (batch: ReadonlyArray<Member<A, B, E>>): Effect.Effect<void> =>
      Effect.gen(function* () {
        const exit = yield* Effect.exit(options.send(batch.map((member) => member.item)))
        if (Exit.isSuccess(exit) && exit.value.length === batch.length) {
          batch.forEach((member, i) => Deferred.doneUnsafe(member.answer, Exit.succeed(exit.value[i]!)))
          return
        }
        if (Exit.isFailure(exit) && batch.length > 1) {
          const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")
          if (error !== undefined && options.splittable(error.error)) {
            yield* Effect.forEach(batch, (member) => settle([member]), { discard: true })
            return
          }
        }
        const outcome = Exit.isFailure(exit)
          ? exit
          : Exit.die(new Error(`a batch of ${batch.length} answered ${exit.value.length} results`))
        for (const member of batch) Deferred.doneUnsafe(member.answer, outcome as Exit.Exit<B, E>)
      })

    const run: Effect.Effect<void> = Effect.gen(function* () {
      // Items given in the same moment as the first go with it.
      yield* Effect.yieldNow
      while (pending.length > 0) yield* settle(pending.splice(0, maxBatch))
      running = false
    })

    return (item: A) =>
      Effect.suspend(() => {
        const answer = Deferred.makeUnsafe<B, E>()
        pending.push({ item, answer })
        if (!running) {
          running = true
          return Effect.andThen(Effect.forkIn(run, scope), Deferred.await(answer))
        }
        return Deferred.await(answer)
      })
  })
