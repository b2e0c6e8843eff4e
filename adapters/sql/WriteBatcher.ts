import { Deferred, Effect, Exit, Option, type Scope } from "effect"
import { SqlClient } from "effect/sql"

export interface WriteBatcherOptions<A, B> {
  /**
   * Writes `items` in one statement outside any transaction (so its completion is its commit) and answers
   * one result per item, in their order. It is called with one item when a batch failed, so that one bad
   * item fails alone.
   */
  readonly write: (items: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<B>, unknown>
  /** At most this many items in one statement. Default 100. */
  readonly maxBatch?: number | undefined
  /** At most this many statements of this batcher at once (the rest wait in the next batch). Default 4. */
  readonly maxInFlight?: number | undefined
}

interface Member<A, B> {
  readonly item: A
  readonly answer: Deferred.Deferred<B>
}

/**
 * Concurrent writes of one kind gathered into one statement: while up to `maxInFlight` statements are
 * running, the writes that arrive wait and go together in the next one, so under load one round trip and
 * one commit serve many requests, and a lone write goes at once (nothing waits on a timer).
 *
 * Each caller is answered only once the statement that carried its item has returned, that is committed.
 * A statement that fails answers none of its items: each is written again alone, and each caller gets
 * its own outcome (a failure is a defect, as every store's infrastructure failure). Inside a transaction
 * the item is written at once on that transaction, never batched: it must commit or roll back with it.
 * A caller that is interrupted while it waits does not withdraw its item; it may still be written.
 */
export const makeWriteBatcher = <A, B>(
  options: WriteBatcherOptions<A, B>
): Effect.Effect<(item: A) => Effect.Effect<B>, never, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const scope = yield* Effect.scope
    const maxBatch = Math.max(1, options.maxBatch ?? 100)
    const maxInFlight = Math.max(1, options.maxInFlight ?? 4)
    const pending: Array<Member<A, B>> = []
    let inFlight = 0

    const alone = (item: A): Effect.Effect<B> =>
      Effect.flatMap(options.write([item]), (results) =>
        results.length === 1
          ? Effect.succeed(results[0]!)
          : Effect.die(new Error(`a batched write answered ${results.length} results for one item`))
      ).pipe(Effect.orDie)

    const settle = (batch: ReadonlyArray<Member<A, B>>) =>
      Effect.gen(function* () {
        const exit = yield* Effect.exit(options.write(batch.map((member) => member.item)))
        if (Exit.isSuccess(exit) && exit.value.length === batch.length) {
          for (let i = 0; i < batch.length; i++) Deferred.doneUnsafe(batch[i]!.answer, Exit.succeed(exit.value[i]!))
          return
        }
        // Nothing of a failed statement was written: each item again on its own, so a bad one fails alone.
        yield* Effect.forEach(
          batch,
          (member) => Effect.flatMap(Effect.exit(alone(member.item)), (own) => Deferred.done(member.answer, own)),
          { discard: true }
        )
      }).pipe(
        // Only when the batcher's scope closes (shutdown): nobody waits forever for an answer.
        Effect.onInterrupt(() =>
          Effect.forEach(batch, (member) => Deferred.interrupt(member.answer), { discard: true })
        )
      )

    /** One statement after another while items are waiting; gives its slot back when none are. */
    const drain: Effect.Effect<void> = Effect.suspend(() => {
      if (pending.length === 0) {
        inFlight--
        return Effect.void
      }
      return Effect.andThen(settle(pending.splice(0, maxBatch)), drain)
    })

    yield* Effect.addFinalizer(() =>
      Effect.forEach(pending.splice(0), (member) => Deferred.interrupt(member.answer), { discard: true })
    )

    // Queued and, when a slot is free, a drain started, in one step no interruption can split.
    const enqueue = (member: Member<A, B>) =>
      Effect.uninterruptible(
        Effect.suspend(() => {
          pending.push(member)
          if (inFlight >= maxInFlight) return Effect.void
          inFlight++
          return Effect.asVoid(Effect.forkIn(Effect.interruptible(drain), scope))
        })
      )

    return (item: A): Effect.Effect<B> =>
      Effect.flatMap(Effect.serviceOption(sql.transactionService), (transaction) => {
        if (Option.isSome(transaction)) return alone(item)
        const answer = Deferred.makeUnsafe<B>()
        return Effect.andThen(enqueue({ item, answer }), Deferred.await(answer))
      })
  })
