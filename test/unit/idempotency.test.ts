import { assert, describe, it, layer } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Ref, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import { randomUUID } from "node:crypto"
import {
  fingerprintRequest,
  IdempotencyConflict,
  IdempotencyUnavailable,
  runIdempotent as runIdempotentWith,
  type IdempotentRequest,
  validateIdempotencyKey
} from "../../core/idempotency/Idempotency.ts"
import { IdempotencyStore, type KeptResponse } from "../../core/idempotency/IdempotencyStore.ts"
import type { Transactions } from "../../core/kernel/Transactions.ts"
import { ValidationError } from "../../core/kernel/Errors.ts"
import { idempotencyStores } from "../support/IdempotencyStores.ts"

describe("Idempotency-Key validation", () => {
  it.effect("accepts 1 to 255 visible ASCII characters", () =>
    Effect.gen(function* () {
      for (const key of ["a", "~", "0f6c1c0e-93b5-4f1e-9d5b-0b1c9a6c1e2d", "!".repeat(255), "A-z_0.9:/+="]) {
        assert.strictEqual(yield* validateIdempotencyKey(key), key)
      }
    })
  )

  it.effect("refuses an empty, too long, spaced, control or non-ASCII key, naming the Idempotency-Key header", () =>
    Effect.gen(function* () {
      for (const key of ["", "a".repeat(256), "a b", " a", "a\tb", "a\nb", "caf\u00e9", "\u007f", "key\u0000"]) {
        const error = yield* Effect.flip(validateIdempotencyKey(key))
        assert.instanceOf(error, ValidationError)
        assert.include(JSON.stringify(error.details), "Idempotency-Key")
      }
    })
  )
})

describe("request fingerprints", () => {
  const request = { caller: "caller:k1", method: "POST", path: "/api/v1/decisions", body: '{"title":"Ship?"}' }

  it("are the hex SHA-256 of a length-prefixed encoding, stable for the same request", () => {
    const fingerprint = fingerprintRequest(request)
    assert.match(fingerprint, /^[0-9a-f]{64}$/)
    assert.strictEqual(fingerprintRequest({ ...request }), fingerprint)
    assert.strictEqual(fingerprintRequest({ ...request, body: new TextEncoder().encode(request.body) }), fingerprint)
  })

  it("differ when any field differs, including when bytes move across a field boundary", () => {
    const fingerprint = fingerprintRequest(request)
    assert.notStrictEqual(fingerprintRequest({ ...request, caller: "caller:k2" }), fingerprint)
    assert.notStrictEqual(fingerprintRequest({ ...request, method: "PUT" }), fingerprint)
    assert.notStrictEqual(fingerprintRequest({ ...request, path: "/api/v1/decisions/" }), fingerprint)
    assert.notStrictEqual(fingerprintRequest({ ...request, body: '{"title":"Ship!"}' }), fingerprint)
    assert.notStrictEqual(
      fingerprintRequest({ caller: "a", method: "POST", path: "/ab", body: "c" }),
      fingerprintRequest({ caller: "a", method: "POST", path: "/a", body: "bc" })
    )
    // The same characters cut into fields at different places never share a fingerprint.
    const cuts = fc.tuple(fc.nat(), fc.nat(), fc.nat())
    fc.assert(
      fc.property(fc.string({ maxLength: 24 }), cuts, cuts, (text, cutsA, cutsB) => {
        const split = (at: readonly [number, number, number]) => {
          const [i, j, k] = at.map((n) => n % (text.length + 1)).sort((x, y) => x - y) as [number, number, number]
          return [text.slice(0, i), text.slice(i, j), text.slice(j, k), text.slice(k)] as const
        }
        const [a, b] = [split(cutsA), split(cutsB)]
        fc.pre(a.some((field, i) => field !== b[i]))
        const of = ([caller, method, path, body]: readonly [string, string, string, string]) =>
          fingerprintRequest({ caller, method, path, body })
        return of(a) !== of(b)
      })
    )
  })
})

class Refused extends Schema.TaggedError<Refused>()("Refused", {}) {}

const ok = (n: number): KeptResponse => ({ status: 201, contentType: "application/json", body: `{"n":${n}}` })
const fingerprint = (body: string) => fingerprintRequest({ caller: "c", method: "POST", path: "/things", body })
const secretsKey = "idempotency-test-secrets-key-0123"
const runIdempotent = <E, R>(request: IdempotentRequest, run: Effect.Effect<KeptResponse, E, R>) =>
  runIdempotentWith(request, run, { secretsKey })
const fresh = (body = "{}") => ({ scope: `caller:${randomUUID()}`, key: randomUUID(), fingerprint: fingerprint(body) })

// The unnamed `layer` inside `describe` builds the shared layer before the first test, so a backend that is
// down fails every test instead of skipping them.
const runIdempotentSuite = (name: string, store: Layer.Layer<IdempotencyStore | Transactions, unknown>) =>
  describe(`runIdempotent (${name})`, () =>
    layer(store, { excludeTestServices: true })((it) => {
      it.effect("50 concurrent identical requests run the handler once and all get its response", () =>
        Effect.gen(function* () {
          const runs = yield* Ref.make(0)
          const handler = Ref.updateAndGet(runs, (n) => n + 1).pipe(
            Effect.tap(() => Effect.sleep("100 millis")),
            Effect.map(ok)
          )
          const request = fresh()
          const responses = yield* Effect.forEach(Array.from({ length: 50 }), () => runIdempotent(request, handler), {
            concurrency: "unbounded"
          })
          assert.strictEqual(yield* Ref.get(runs), 1)
          assert.strictEqual(responses.length, 50)
          for (const response of responses) assert.deepStrictEqual(response, ok(1))
        })
      )

      it.effect("a repeat replays the kept response, error responses included, without running again", () =>
        Effect.gen(function* () {
          const runs = yield* Ref.make(0)
          const refusal: KeptResponse = { status: 422, contentType: "application/json", body: '{"ok":false}' }
          const handler = Ref.update(runs, (n) => n + 1).pipe(Effect.as(refusal))
          const request = fresh()
          assert.deepStrictEqual(yield* runIdempotent(request, handler), refusal)
          assert.deepStrictEqual(yield* runIdempotent(request, handler), refusal)
          assert.strictEqual(yield* Ref.get(runs), 1)
        })
      )

      it.effect("the same key with a different body is an IdempotencyConflict", () =>
        Effect.gen(function* () {
          const request = fresh('{"title":"a"}')
          yield* runIdempotent(request, Effect.succeed(ok(1)))
          const error = yield* Effect.flip(
            runIdempotent({ ...request, fingerprint: fingerprint('{"title":"b"}') }, Effect.succeed(ok(2)))
          )
          assert.instanceOf(error, IdempotencyConflict)
        })
      )

      it.effect("a run that dies releases the key, so a retry runs", () =>
        Effect.gen(function* () {
          const request = fresh()
          const exit = yield* Effect.exit(runIdempotent(request, Effect.die(new Error("boom"))))
          assert.isTrue(Exit.hasDies(exit))
          assert.deepStrictEqual(yield* runIdempotent(request, Effect.succeed(ok(2))), ok(2))
          assert.deepStrictEqual(yield* runIdempotent(request, Effect.succeed(ok(3))), ok(2))
        })
      )

      it.effect("a run that fails with a typed error is not kept: the error propagates and a retry runs", () =>
        Effect.gen(function* () {
          const request = fresh()
          const error = yield* Effect.flip(runIdempotent(request, Effect.fail(new Refused())))
          assert.instanceOf(error, Refused)
          assert.deepStrictEqual(yield* runIdempotent(request, Effect.succeed(ok(2))), ok(2))
        })
      )

      it.effect("an interrupted run releases the key", () =>
        Effect.gen(function* () {
          const request = fresh()
          const started = yield* Deferred.make<void>()
          const fiber = yield* Effect.forkChild(
            runIdempotent(request, Deferred.succeed(started, undefined).pipe(Effect.andThen(Effect.never)))
          )
          yield* Deferred.await(started)
          yield* Fiber.interrupt(fiber)
          assert.deepStrictEqual(yield* runIdempotent(request, Effect.succeed(ok(2))), ok(2))
        })
      )

      it.effect("a repeat arriving while the first runs waits for it and replays its response", () =>
        Effect.gen(function* () {
          const runs = yield* Ref.make(0)
          const request = fresh()
          const started = yield* Deferred.make<void>()
          const finish = yield* Deferred.make<void>()
          const first = yield* Effect.forkChild(
            runIdempotent(
              request,
              Deferred.succeed(started, undefined).pipe(
                Effect.andThen(Ref.update(runs, (n) => n + 1)),
                Effect.andThen(Deferred.await(finish)),
                Effect.as(ok(1))
              )
            )
          )
          yield* Deferred.await(started)
          const second = yield* Effect.forkChild(
            runIdempotent(request, Ref.update(runs, (n) => n + 1).pipe(Effect.as(ok(2))))
          )
          yield* Effect.sleep("50 millis")
          assert.isUndefined(second.pollUnsafe(), "the repeat answers only once the first has finished")
          yield* Deferred.succeed(finish, undefined)
          assert.deepStrictEqual(yield* Fiber.join(first), ok(1))
          assert.deepStrictEqual(yield* Fiber.join(second), ok(1))
          assert.strictEqual(yield* Ref.get(runs), 1)
        })
      )

      it.effect("a kept response is sealed at rest: the store never holds the body in the clear", () =>
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const request = fresh()
          const withSecret: KeptResponse = {
            status: 201,
            contentType: "application/json",
            body: '{"data":{"secret":"dcd_plaintext-shown-once"}}'
          }
          assert.deepStrictEqual(yield* runIdempotent(request, Effect.succeed(withSecret)), withSecret)
          const kept = yield* store.claim({ ...request, nowMs: Date.now(), expiresAtMs: Date.now() + 1000 })
          assert.strictEqual(kept._tag, "Replay")
          if (kept._tag === "Replay") {
            assert.notInclude(kept.response.body, "dcd_plaintext")
            assert.strictEqual(kept.response.status, 201)
          }
          assert.deepStrictEqual(yield* runIdempotent(request, Effect.succeed(ok(9))), withSecret)
        })
      )

      it.effect("without a secrets key a request with a key is refused and nothing runs", () =>
        Effect.gen(function* () {
          const runs = yield* Ref.make(0)
          const error = yield* Effect.flip(
            runIdempotentWith(fresh(), Ref.update(runs, (n) => n + 1).pipe(Effect.as(ok(1))), {
              secretsKey: undefined
            })
          )
          assert.instanceOf(error, IdempotencyUnavailable)
          assert.strictEqual(yield* Ref.get(runs), 0)
        })
      )

      it.effect("after the 24 h retention the same key runs again", () =>
        Effect.gen(function* () {
          const runs = yield* Ref.make(0)
          const handler = Ref.updateAndGet(runs, (n) => n + 1).pipe(Effect.map(ok))
          const request = fresh()
          assert.deepStrictEqual(yield* runIdempotent(request, handler), ok(1))
          yield* TestClock.adjust("23 hours")
          assert.deepStrictEqual(yield* runIdempotent(request, handler), ok(1))
          yield* TestClock.adjust("1 hour")
          yield* TestClock.adjust("1 second")
          assert.deepStrictEqual(yield* runIdempotent(request, handler), ok(2))
          assert.deepStrictEqual(yield* runIdempotent(request, handler), ok(2))
          assert.strictEqual(yield* Ref.get(runs), 2)
        }).pipe(Effect.provide(TestClock.layer()))
      )
    }))

for (const store of idempotencyStores) runIdempotentSuite(store.name, store.layer)
