import { assert, describe, layer } from "@effect/vitest"
import { Effect, Exit, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import { IdempotencyStore } from "../../core/idempotency/IdempotencyStore.ts"
import { Transactions } from "../../core/kernel/Transactions.ts"

// The writes these tests watch are idempotency records: one is "kept" when a later claim of its key replays it.
const now = 1_800_000_000_000
const day = 24 * 60 * 60 * 1000
const response = { status: 201, contentType: "application/json", body: "{}" }

const write = (scope: string, key: string) =>
  Effect.gen(function* () {
    const store = yield* IdempotencyStore
    yield* store.claim({ scope, key, fingerprint: "fp", nowMs: now, expiresAtMs: now + day })
    yield* store.complete({ scope, key, response, expiresAtMs: now + day })
  })

const kept = (scope: string, key: string) =>
  Effect.gen(function* () {
    const { atomically } = yield* Transactions
    const store = yield* IdempotencyStore
    // Looked at in a unit that is then undone, so looking leaves nothing behind.
    const claim = yield* Effect.flip(
      atomically(
        Effect.flatMap(store.claim({ scope, key, fingerprint: "fp", nowMs: now, expiresAtMs: now + day }), Effect.fail)
      )
    )
    return claim._tag === "Replay"
  })

class Undo {
  readonly _tag = "Undo"
}

/**
 * The Transactions port's contract (core/kernel/Transactions.ts): what every adapter does (after-commit
 * effects, joined and nested units), and with `undoes` what only an adapter that can undo writes does.
 */
export const TransactionsContract = (
  name: string,
  transactions: Layer.Layer<IdempotencyStore | Transactions, unknown>,
  undoes: boolean
) =>
  describe(`Transactions contract (${name})`, () =>
    layer(transactions, { excludeTestServices: true })((it) => {
      it.effect(
        "afterCommit inside a unit, a joined effect or a nested unit runs once the outermost unit has committed",
        () =>
          Effect.gen(function* () {
            const { atomically, join, afterCommit } = yield* Transactions
            const ran: Array<string> = []
            const note = (what: string) => afterCommit(Effect.sync(() => ran.push(what)))
            yield* atomically(
              Effect.gen(function* () {
                yield* note("unit")
                yield* join(note("joined"))
                yield* atomically(note("nested"))
                assert.deepStrictEqual(ran, [])
              })
            )
            assert.deepStrictEqual(ran, ["unit", "joined", "nested"])
            // Outside a unit, join is a unit of its own.
            yield* join(
              Effect.andThen(
                note("alone"),
                Effect.sync(() => assert.deepStrictEqual(ran.length, 3))
              )
            )
            assert.deepStrictEqual(ran, ["unit", "joined", "nested", "alone"])
          })
      )

      it.effect("afterCommit never runs for a unit that is undone, joined effects included", () =>
        Effect.gen(function* () {
          const { atomically, join, afterCommit } = yield* Transactions
          const ran: Array<string> = []
          const exit = yield* Effect.exit(
            atomically(
              Effect.gen(function* () {
                yield* afterCommit(Effect.sync(() => ran.push("unit")))
                yield* join(afterCommit(Effect.sync(() => ran.push("joined"))))
                return yield* Effect.fail(new Undo())
              })
            )
          )
          assert.isTrue(Exit.isFailure(exit))
          assert.deepStrictEqual(ran, [])
        })
      )

      if (undoes) {
        it.effect("a unit's writes, joined ones included, commit together or are undone together", () =>
          Effect.gen(function* () {
            const { atomically, join } = yield* Transactions
            const scope = `t:${randomUUID()}`
            yield* atomically(Effect.andThen(write(scope, "a"), join(write(scope, "b"))))
            assert.isTrue(yield* kept(scope, "a"))
            assert.isTrue(yield* kept(scope, "b"))
            yield* Effect.exit(
              atomically(
                Effect.andThen(write(scope, "c"), Effect.andThen(join(write(scope, "d")), Effect.fail(new Undo())))
              )
            )
            assert.isFalse(yield* kept(scope, "c"))
            assert.isFalse(yield* kept(scope, "d"))
          })
        )

        it.effect("a failed nested unit undoes only its own writes; a failed joined effect undoes nothing alone", () =>
          Effect.gen(function* () {
            const { atomically, join } = yield* Transactions
            const scope = `t:${randomUUID()}`
            yield* atomically(
              Effect.gen(function* () {
                yield* write(scope, "outer")
                yield* Effect.exit(atomically(Effect.andThen(write(scope, "nested"), Effect.fail(new Undo()))))
                yield* Effect.exit(join(Effect.andThen(write(scope, "joined"), Effect.fail(new Undo()))))
              })
            )
            assert.isTrue(yield* kept(scope, "outer"))
            assert.isFalse(yield* kept(scope, "nested"))
            // Joined: its writes belong to the unit, which committed.
            assert.isTrue(yield* kept(scope, "joined"))
          })
        )
      }
    }))
