import { assert, describe, layer } from "@effect/vitest"
import { Cause, Effect, Exit, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import { runIdempotent } from "../../core/idempotency/Idempotency.ts"
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

      it.effect("shared units that arrive together each commit their writes; one that fails fails alone", () =>
        Effect.gen(function* () {
          const { shared, afterCommit } = yield* Transactions
          const scope = `t:${randomUUID()}`
          const committed: Array<string> = []
          const unit = (key: string) =>
            shared(
              key,
              Effect.gen(function* () {
                yield* write(scope, key)
                yield* afterCommit(Effect.sync(() => committed.push(key)))
                if (key === "k3") return yield* Effect.fail(new Undo())
                return key
              })
            )
          const keys = Array.from({ length: 8 }, (_, i) => `k${i}`)
          const exits = yield* Effect.forEach(keys, (key) => Effect.exit(unit(key)), { concurrency: "unbounded" })
          for (const [i, exit] of exits.entries()) {
            if (i === 3) {
              assert.isTrue(Exit.isFailure(exit) && Cause.hasFails(exit.cause))
            } else {
              assert.deepStrictEqual(exit, Exit.succeed(keys[i]!))
              assert.isTrue(yield* kept(scope, keys[i]!))
            }
          }
          // Each unit that succeeded was heard of once after its commit, even where its group was undone and it
          // ran again alone; the one that failed never.
          assert.deepStrictEqual(
            [...committed].sort(),
            keys.filter((k) => k !== "k3")
          )
          if (undoes) assert.isFalse(yield* kept(scope, "k3"))
        })
      )

      it.effect("shared idempotent requests: concurrent repeats of a key run once and all get its response", () =>
        Effect.gen(function* () {
          const { afterCommit } = yield* Transactions
          const scope = `t:${randomUUID()}`
          const runs = new Map<string, number>()
          const request = (key: string) =>
            runIdempotent(
              { scope, key, fingerprint: `fp-${key}` },
              Effect.gen(function* () {
                // Counted at commit: a run in a group that was undone (and ran again) is not a run that happened.
                yield* afterCommit(Effect.sync(() => runs.set(key, (runs.get(key) ?? 0) + 1)))
                return {
                  status: 201,
                  contentType: "application/json",
                  body: JSON.stringify({ key, run: randomUUID() })
                }
              }),
              { secretsKey: "a-secrets-key-of-at-least-32-characters!", shared: true }
            )
          const keys = Array.from({ length: 30 }, (_, i) => `key-${i % 10}`)
          const answers = yield* Effect.forEach(keys, request, { concurrency: "unbounded" })
          for (let k = 0; k < 10; k++) {
            const key = `key-${k}`
            assert.strictEqual(runs.get(key), 1, key)
            const bodies = new Set(answers.filter((_, i) => keys[i] === key).map((a) => a.body))
            assert.strictEqual(bodies.size, 1, key)
          }
        })
      )

      it.effect("shared idempotent requests one after another: a repeat replays, another request conflicts", () =>
        Effect.gen(function* () {
          const { afterCommit, atomically } = yield* Transactions
          const scope = `t:${randomUUID()}`
          let runs = 0
          const request = (fingerprint: string) =>
            runIdempotent(
              { scope, key: "one-key", fingerprint },
              Effect.gen(function* () {
                yield* afterCommit(Effect.sync(() => runs++))
                return { status: 201, contentType: "application/json", body: JSON.stringify({ run: randomUUID() }) }
              }),
              { secretsKey: "a-secrets-key-of-at-least-32-characters!", shared: true }
            )
          // A transaction first, so that a unit alone may run as one statement (adapters/sql/TransactionsSql.ts).
          yield* atomically(Effect.void)
          const first = yield* request("fp")
          const again = yield* request("fp")
          const other = yield* Effect.exit(request("another-fp"))
          assert.strictEqual(runs, 1)
          assert.deepStrictEqual(again, first)
          assert.isTrue(Exit.isFailure(other) && Cause.hasFails(other.cause))
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
