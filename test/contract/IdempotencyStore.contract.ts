import { assert, describe, layer } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import { IdempotencyStore, type KeptResponse } from "../../core/idempotency/IdempotencyStore.ts"
import { Transactions } from "../../core/kernel/Transactions.ts"

// Every test works in scopes of its own, so the suite can share one store. Times are epoch milliseconds in
// the present, except the purge test's, which are far in the past so that it only ever purges its own rows.
const now = 1_800_000_000_000
const day = 24 * 60 * 60 * 1000
const freshScope = () => `caller:${randomUUID()}`

const created: KeptResponse = {
  status: 201,
  contentType: "application/json; charset=utf-8",
  body: JSON.stringify({ ok: true, data: { id: "01J", title: 'Zoë ✓ "quoted"\nline two' } })
}

/**
 * The IdempotencyStore port's contract (core/idempotency/IdempotencyStore.ts), run once per adapter with the
 * Transactions of the same adapter family: claims are made inside units of work, as the use cases make them.
 */
export const IdempotencyStoreContract = (name: string, store: Layer.Layer<IdempotencyStore | Transactions, unknown>) =>
  describe(`IdempotencyStore contract (${name})`, () =>
    layer(store, { excludeTestServices: true })((it) => {
      it.effect(
        "the first claim of a key is Claimed; after complete the same request replays status, type and body",
        () =>
          Effect.gen(function* () {
            const store = yield* IdempotencyStore
            const scope = freshScope()
            const input = { scope, key: "k1", fingerprint: "fp-a", nowMs: now, expiresAtMs: now + day }
            assert.deepStrictEqual(yield* store.claim(input), { _tag: "Claimed" })
            yield* store.complete({ scope, key: "k1", response: created, expiresAtMs: now + day })
            const replay = yield* store.claim({ ...input, nowMs: now + 1000 })
            assert.deepStrictEqual(replay, { _tag: "Replay", response: created })
            // A kept error response is a response like any other.
            const conflict = { status: 409, contentType: "application/json", body: "" }
            yield* store.claim({ ...input, key: "k2" })
            yield* store.complete({ scope, key: "k2", response: conflict, expiresAtMs: now + day })
            assert.deepStrictEqual(yield* store.claim({ ...input, key: "k2" }), { _tag: "Replay", response: conflict })
          })
      )

      it.effect("a different fingerprint under a completed key is a Mismatch", () =>
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const scope = freshScope()
          const input = { scope, key: "k1", fingerprint: "fp-a", nowMs: now, expiresAtMs: now + day }
          yield* store.claim(input)
          yield* store.complete({ scope, key: "k1", response: created, expiresAtMs: now + day })
          assert.deepStrictEqual(yield* store.claim({ ...input, fingerprint: "fp-b" }), { _tag: "Mismatch" })
          assert.deepStrictEqual(yield* store.claim(input), { _tag: "Replay", response: created })
        })
      )

      it.effect("a claim that was never completed counts as absent, for the same request or another", () =>
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const scope = freshScope()
          const input = { scope, key: "k1", fingerprint: "fp-a", nowMs: now, expiresAtMs: now + day }
          yield* store.claim(input)
          assert.deepStrictEqual(yield* store.claim({ ...input, fingerprint: "fp-b" }), { _tag: "Claimed" })
          yield* store.release({ scope, key: "k1" })
          assert.deepStrictEqual(yield* store.claim(input), { _tag: "Claimed" })
        })
      )

      it.effect("release does not forget a completed response", () =>
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const scope = freshScope()
          const input = { scope, key: "k1", fingerprint: "fp-a", nowMs: now, expiresAtMs: now + day }
          yield* store.claim(input)
          yield* store.complete({ scope, key: "k1", response: created, expiresAtMs: now + day })
          yield* store.release({ scope, key: "k1" })
          assert.deepStrictEqual(yield* store.claim(input), { _tag: "Replay", response: created })
        })
      )

      it.effect("a record past its expiry counts as absent and can be claimed again", () =>
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const scope = freshScope()
          const input = { scope, key: "k1", fingerprint: "fp-a", nowMs: now, expiresAtMs: now + day }
          yield* store.claim(input)
          yield* store.complete({ scope, key: "k1", response: created, expiresAtMs: now + day })
          // At its expiry a record still counts; one millisecond later it is gone.
          assert.deepStrictEqual(yield* store.claim({ ...input, nowMs: now + day }), {
            _tag: "Replay",
            response: created
          })
          const later = { ...input, fingerprint: "fp-b", nowMs: now + day + 1, expiresAtMs: now + 2 * day }
          assert.deepStrictEqual(yield* store.claim(later), { _tag: "Claimed" })
          yield* store.complete({ scope, key: "k1", response: created, expiresAtMs: now + 2 * day })
          assert.deepStrictEqual(yield* store.claim({ ...later, fingerprint: "fp-a" }), { _tag: "Mismatch" })
        })
      )

      it.effect("purgeExpired deletes only expired records and answers how many went", () =>
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const scope = freshScope()
          const base = { scope, fingerprint: "fp-a", nowMs: 1_000 }
          yield* store.claim({ ...base, key: "expired-done", expiresAtMs: 2_500 })
          yield* store.complete({ scope, key: "expired-done", response: created, expiresAtMs: 2_500 })
          yield* store.claim({ ...base, key: "live-done", expiresAtMs: 5_000 })
          yield* store.complete({ scope, key: "live-done", response: created, expiresAtMs: 5_000 })
          assert.strictEqual(yield* store.purgeExpired(3_000), 1)
          assert.strictEqual(yield* store.purgeExpired(3_000), 0)
          const at = { ...base, nowMs: 3_000, expiresAtMs: 9_000 }
          assert.deepStrictEqual(yield* store.claim({ ...at, key: "live-done" }), { _tag: "Replay", response: created })
          // Purged records are absent even to a clock that has not reached their expiry.
          const past = { ...base, nowMs: 1_500, expiresAtMs: 9_000 }
          assert.deepStrictEqual(yield* store.claim({ ...past, key: "expired-done" }), { _tag: "Claimed" })
        })
      )

      it.effect("the same key under two scopes names two independent requests", () =>
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const [a, b] = [freshScope(), freshScope()]
          const input = { key: "shared", nowMs: now, expiresAtMs: now + day }
          assert.deepStrictEqual(yield* store.claim({ ...input, scope: a, fingerprint: "fp-a" }), { _tag: "Claimed" })
          yield* store.complete({ scope: a, key: "shared", response: created, expiresAtMs: now + day })
          assert.deepStrictEqual(yield* store.claim({ ...input, scope: b, fingerprint: "fp-b" }), { _tag: "Claimed" })
          assert.deepStrictEqual(yield* store.claim({ ...input, scope: a, fingerprint: "fp-a" }), {
            _tag: "Replay",
            response: created
          })
        })
      )

      it.effect("of 30 concurrent units claiming a fresh key one is Claimed and the others wait and replay it", () =>
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const { atomically } = yield* Transactions
          const scope = freshScope()
          const input = { scope, key: "k1", fingerprint: "fp-a", nowMs: now, expiresAtMs: now + day }
          const unit = atomically(
            Effect.gen(function* () {
              const claim = yield* store.claim(input)
              if (claim._tag === "Claimed") {
                yield* Effect.sleep("20 millis")
                yield* store.complete({ scope, key: "k1", response: created, expiresAtMs: now + day })
              }
              return claim
            })
          )
          const claims = yield* Effect.forEach(Array.from({ length: 30 }), () => unit, { concurrency: "unbounded" })
          assert.strictEqual(claims.filter((c) => c._tag === "Claimed").length, 1)
          assert.deepStrictEqual(
            claims.filter((c) => c._tag !== "Claimed"),
            Array.from({ length: 29 }, () => ({ _tag: "Replay", response: created }) as const)
          )
        })
      )

      it.effect("a claim waiting on a unit that is undone then claims the key itself", () =>
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const { atomically } = yield* Transactions
          const scope = freshScope()
          const input = { scope, key: "k1", fingerprint: "fp-a", nowMs: now, expiresAtMs: now + day }
          const claimed = yield* Deferred.make<void>()
          const first = yield* atomically(
            Effect.gen(function* () {
              yield* store.claim(input)
              yield* Deferred.succeed(claimed, undefined)
              yield* Effect.sleep("30 millis")
              return yield* Effect.fail("undone")
            })
          ).pipe(
            Effect.onError(() => store.release({ scope, key: "k1" })),
            Effect.forkChild
          )
          yield* Deferred.await(claimed)
          const second = yield* atomically(store.claim(input))
          assert.isTrue(Exit.isFailure(yield* Fiber.await(first)))
          assert.deepStrictEqual(second, { _tag: "Claimed" })
        })
      )
    }))
