import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import { SessionStore, type Session } from "../../core/tasks/SessionStore.ts"

const sessionOf = (fields: Partial<Session> = {}): Session => ({
  hash: `h_${randomUUID()}`,
  email: "alice@example.com",
  name: "Alice",
  expiresAt: "2030-01-01T12:00:00.000Z",
  ...fields
})

/** The SessionStore port's contract (core/tasks/SessionStore.ts), run once per adapter. */
export const SessionStoreContract = (name: string, store: Layer.Layer<SessionStore, unknown>) =>
  describe(`SessionStore contract (${name})`, () =>
    layer(store, { excludeTestServices: true })((it) => {
      it.effect("find answers a session by its hash until it expires", () =>
        Effect.gen(function* () {
          const sessions = yield* SessionStore
          const session = sessionOf({ name: `Zoë "Q" ✓` })
          yield* sessions.create(session)
          assert.deepStrictEqual(yield* sessions.find(session.hash, "2030-01-01T11:59:59.999Z"), session)
          assert.isUndefined(yield* sessions.find(session.hash, "2030-01-01T12:00:00.000Z"))
          assert.isUndefined(yield* sessions.find(`h_${randomUUID()}`, "2029-01-01T00:00:00.000Z"))
        })
      )

      it.effect("creating a session again with the same hash replaces it", () =>
        Effect.gen(function* () {
          const sessions = yield* SessionStore
          const session = sessionOf()
          yield* sessions.create(session)
          const renewed = { ...session, expiresAt: "2031-01-01T00:00:00.000Z" }
          yield* sessions.create(renewed)
          assert.deepStrictEqual(yield* sessions.find(session.hash, "2030-06-01T00:00:00.000Z"), renewed)
        })
      )

      it.effect("remove ends a session; removing one that is gone changes nothing", () =>
        Effect.gen(function* () {
          const sessions = yield* SessionStore
          const ended = sessionOf()
          const kept = sessionOf()
          yield* sessions.create(ended)
          yield* sessions.create(kept)
          yield* sessions.remove(ended.hash)
          yield* sessions.remove(ended.hash)
          assert.isUndefined(yield* sessions.find(ended.hash, "2029-01-01T00:00:00.000Z"))
          assert.deepStrictEqual(yield* sessions.find(kept.hash, "2029-01-01T00:00:00.000Z"), kept)
        })
      )
    }))
