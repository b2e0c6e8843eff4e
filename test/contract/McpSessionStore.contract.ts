import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import { McpSessionStore, type McpSession } from "../../core/decisions/McpSessionStore.ts"

const session = (keyId: string, lastSeenAt: number, fields: Partial<McpSession> = {}): McpSession => ({
  idHash: randomUUID(),
  keyId,
  protocolVersion: "2025-11-25",
  initialize: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "agent ✓", version: "1" } },
  lastSeenAt,
  ...fields
})

const minute = 60_000
const t0 = Date.parse("2030-01-01T10:00:00.000Z")

/** The McpSessionStore port's contract (core/decisions/McpSessionStore.ts), run once per adapter. */
export const McpSessionStoreContract = (name: string, store: Layer.Layer<McpSessionStore, unknown>) =>
  describe(`McpSessionStore contract (${name})`, () =>
    layer(store, { excludeTestServices: true })((it) => {
      it.effect("a session is found by its key while in use, and its last use moves forward", () =>
        Effect.gen(function* () {
          const sessions = yield* McpSessionStore
          const key = `key_${randomUUID()}`
          const opened = session(key, t0)
          yield* sessions.open(opened, 10)
          const used = yield* sessions.use(opened.idHash, key, t0 - minute, t0 + minute)
          assert.deepStrictEqual(used, { ...opened, lastSeenAt: t0 + minute })
          assert.isUndefined(yield* sessions.use(opened.idHash, `key_${randomUUID()}`, t0 - minute, t0 + minute))
          assert.isUndefined(yield* sessions.use(randomUUID(), key, t0 - minute, t0 + minute))
        })
      )

      it.effect("an idle session is not found, and the purge forgets it", () =>
        Effect.gen(function* () {
          const sessions = yield* McpSessionStore
          const key = `key_${randomUUID()}`
          const idle = session(key, t0)
          const active = session(key, t0 + 30 * minute)
          yield* sessions.open(idle, 10)
          yield* sessions.open(active, 10)
          assert.isUndefined(yield* sessions.use(idle.idHash, key, t0, t0 + 31 * minute))
          yield* sessions.purgeIdle(t0 + 10 * minute)
          assert.isUndefined(yield* sessions.use(idle.idHash, key, 0, t0 + 31 * minute))
          assert.isDefined(yield* sessions.use(active.idHash, key, t0, t0 + 31 * minute))
        })
      )

      it.effect("a key keeps at most its cap: the least recently used go first, the new one stays", () =>
        Effect.gen(function* () {
          const sessions = yield* McpSessionStore
          const key = `key_${randomUUID()}`
          const other = `key_${randomUUID()}`
          const theirs = session(other, t0)
          yield* sessions.open(theirs, 2)
          const first = session(key, t0)
          const second = session(key, t0 + minute)
          yield* sessions.open(first, 2)
          yield* sessions.open(second, 2)
          yield* sessions.use(first.idHash, key, 0, t0 + 2 * minute)
          const third = session(key, t0 + 3 * minute)
          yield* sessions.open(third, 2)
          assert.isDefined(yield* sessions.use(first.idHash, key, 0, t0 + 4 * minute))
          assert.isUndefined(yield* sessions.use(second.idHash, key, 0, t0 + 4 * minute))
          assert.isDefined(yield* sessions.use(third.idHash, key, 0, t0 + 4 * minute))
          assert.isDefined(yield* sessions.use(theirs.idHash, other, 0, t0 + 4 * minute))
        })
      )

      it.effect("only its key ends a session, once", () =>
        Effect.gen(function* () {
          const sessions = yield* McpSessionStore
          const key = `key_${randomUUID()}`
          const opened = session(key, t0)
          yield* sessions.open(opened, 10)
          assert.isFalse(yield* sessions.end(opened.idHash, `key_${randomUUID()}`))
          assert.isTrue(yield* sessions.end(opened.idHash, key))
          assert.isFalse(yield* sessions.end(opened.idHash, key))
          assert.isUndefined(yield* sessions.use(opened.idHash, key, 0, t0))
        })
      )
    }))
