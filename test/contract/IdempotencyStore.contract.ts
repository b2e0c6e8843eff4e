import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import { IdempotencyStore, type KeptResponse } from "../../core/idempotency/IdempotencyStore.ts"

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

/** The IdempotencyStore port's contract (core/idempotency/IdempotencyStore.ts), run once per adapter. */
export const IdempotencyStoreContract = (name: string, store: Layer.Layer<IdempotencyStore, unknown>) =>
  describe(`IdempotencyStore contract (${name})`, () =>
    layer(store, { excludeTestServices: true })((it) => {
      it.effect("the first claim of a key is Claimed; the same request while it runs is Running", () =>
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const scope = freshScope()
          const input = { scope, key: "k1", fingerprint: "fp-a", nowMs: now, expiresAtMs: now + day }
          assert.deepStrictEqual(yield* store.claim(input), { _tag: "Claimed" })
          assert.deepStrictEqual(yield* store.claim({ ...input, nowMs: now + 5 }), { _tag: "Running" })
        })
      )

      it.effect("after complete the same request is a Replay of the identical status, content type and body", () =>
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const scope = freshScope()
          const input = { scope, key: "k1", fingerprint: "fp-a", nowMs: now, expiresAtMs: now + day }
          yield* store.claim(input)
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

      it.effect("a different fingerprint under a used key is a Mismatch, while running and after completion", () =>
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const scope = freshScope()
          const input = { scope, key: "k1", fingerprint: "fp-a", nowMs: now, expiresAtMs: now + day }
          yield* store.claim(input)
          assert.deepStrictEqual(yield* store.claim({ ...input, fingerprint: "fp-b" }), { _tag: "Mismatch" })
          yield* store.complete({ scope, key: "k1", response: created, expiresAtMs: now + day })
          assert.deepStrictEqual(yield* store.claim({ ...input, fingerprint: "fp-b" }), { _tag: "Mismatch" })
          assert.deepStrictEqual(yield* store.claim(input), { _tag: "Replay", response: created })
        })
      )

      it.effect("release frees a running key for the next claim, even of another request", () =>
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const scope = freshScope()
          const input = { scope, key: "k1", fingerprint: "fp-a", nowMs: now, expiresAtMs: now + day }
          yield* store.claim(input)
          yield* store.release({ scope, key: "k1" })
          assert.deepStrictEqual(yield* store.claim({ ...input, fingerprint: "fp-b" }), { _tag: "Claimed" })
          assert.deepStrictEqual(yield* store.claim({ ...input, fingerprint: "fp-b" }), { _tag: "Running" })
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

      it.effect("a running claim holds the key for its lease only; complete keeps the response for the retention", () =>
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const scope = freshScope()
          const lease = 5 * 60 * 1000
          const input = { scope, key: "k1", fingerprint: "fp-a", nowMs: now, expiresAtMs: now + lease }
          yield* store.claim(input)
          // A crashed request never completes: after its lease the key is free again.
          assert.deepStrictEqual(yield* store.claim({ ...input, nowMs: now + lease + 1 }), { _tag: "Claimed" })
          yield* store.claim({ ...input, key: "k2" })
          yield* store.complete({ scope, key: "k2", response: created, expiresAtMs: now + day })
          assert.deepStrictEqual(yield* store.claim({ ...input, key: "k2", nowMs: now + lease + 1 }), {
            _tag: "Replay",
            response: created
          })
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
          assert.deepStrictEqual(yield* store.claim(later), { _tag: "Running" })
          assert.deepStrictEqual(yield* store.claim({ ...later, fingerprint: "fp-a" }), { _tag: "Mismatch" })
          // A running record expires too: its owner is gone for good.
          const muchLater = { ...later, nowMs: now + 2 * day + 1, expiresAtMs: now + 3 * day }
          assert.deepStrictEqual(yield* store.claim(muchLater), { _tag: "Claimed" })
        })
      )

      it.effect("purgeExpired deletes only expired records and answers how many went", () =>
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const scope = freshScope()
          const base = { scope, fingerprint: "fp-a", nowMs: 1_000 }
          yield* store.claim({ ...base, key: "expired-running", expiresAtMs: 2_000 })
          yield* store.claim({ ...base, key: "expired-done", expiresAtMs: 2_500 })
          yield* store.complete({ scope, key: "expired-done", response: created, expiresAtMs: 2_500 })
          yield* store.claim({ ...base, key: "live-done", expiresAtMs: 5_000 })
          yield* store.complete({ scope, key: "live-done", response: created, expiresAtMs: 5_000 })
          yield* store.claim({ ...base, key: "live-running", expiresAtMs: 3_000 })
          assert.strictEqual(yield* store.purgeExpired(3_000), 2)
          assert.strictEqual(yield* store.purgeExpired(3_000), 0)
          const at = { ...base, nowMs: 3_000, expiresAtMs: 9_000 }
          assert.deepStrictEqual(yield* store.claim({ ...at, key: "live-done" }), { _tag: "Replay", response: created })
          assert.deepStrictEqual(yield* store.claim({ ...at, key: "live-running" }), { _tag: "Running" })
          // Purged records are absent even to a clock that has not reached their expiry.
          const past = { ...base, nowMs: 1_500, expiresAtMs: 9_000 }
          assert.deepStrictEqual(yield* store.claim({ ...past, key: "expired-done" }), { _tag: "Claimed" })
          assert.deepStrictEqual(yield* store.claim({ ...past, key: "expired-running" }), { _tag: "Claimed" })
        })
      )

      it.effect("the same key under two scopes names two independent requests", () =>
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const [a, b] = [freshScope(), freshScope()]
          const input = { key: "shared", nowMs: now, expiresAtMs: now + day }
          assert.deepStrictEqual(yield* store.claim({ ...input, scope: a, fingerprint: "fp-a" }), { _tag: "Claimed" })
          assert.deepStrictEqual(yield* store.claim({ ...input, scope: b, fingerprint: "fp-b" }), { _tag: "Claimed" })
          yield* store.complete({ scope: a, key: "shared", response: created, expiresAtMs: now + day })
          assert.deepStrictEqual(yield* store.claim({ ...input, scope: b, fingerprint: "fp-b" }), { _tag: "Running" })
          yield* store.release({ scope: b, key: "shared" })
          assert.deepStrictEqual(yield* store.claim({ ...input, scope: a, fingerprint: "fp-a" }), {
            _tag: "Replay",
            response: created
          })
          assert.deepStrictEqual(yield* store.claim({ ...input, scope: b, fingerprint: "fp-c" }), { _tag: "Claimed" })
        })
      )

      it.effect("of 50 concurrent claims of a fresh key exactly one is Claimed, the others Running", () =>
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const input = { scope: freshScope(), key: "k1", fingerprint: "fp-a", nowMs: now, expiresAtMs: now + day }
          const claims = yield* Effect.forEach(Array.from({ length: 50 }), () => store.claim(input), {
            concurrency: "unbounded"
          })
          assert.strictEqual(claims.filter((c) => c._tag === "Claimed").length, 1)
          assert.strictEqual(claims.filter((c) => c._tag === "Running").length, 49)
        })
      )

      it.effect("of 20 concurrent claims of an expired key exactly one is Claimed", () =>
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const scope = freshScope()
          yield* store.claim({ scope, key: "k1", fingerprint: "fp-old", nowMs: now, expiresAtMs: now + 10 })
          const input = { scope, key: "k1", fingerprint: "fp-a", nowMs: now + 11, expiresAtMs: now + day }
          const claims = yield* Effect.forEach(Array.from({ length: 20 }), () => store.claim(input), {
            concurrency: "unbounded"
          })
          assert.strictEqual(claims.filter((c) => c._tag === "Claimed").length, 1)
          assert.strictEqual(claims.filter((c) => c._tag === "Running").length, 19)
        })
      )
    }))
