import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import { monotonicFactory } from "ulid"
import { TaskApiKeyStore, type StoredTaskApiKey, type TaskApiKey } from "../../core/tasks/ApiKeyStore.ts"

// The suite shares one store: every test works with users and hashes of its own.
const freshUser = () => `usr${randomUUID().replace(/-/g, "").slice(0, 14)}`
const nextId = monotonicFactory()
const at = (minute: number) => `2030-01-01T10:${String(minute).padStart(2, "0")}:00.000Z`

const keyOf = (userId: string, fields: Partial<StoredTaskApiKey> = {}): StoredTaskApiKey => ({
  id: nextId(),
  userId,
  name: "laptop",
  keyPrefix: "tsk_abcdefgh",
  hash: `h_${randomUUID()}`,
  createdAt: at(0),
  lastUsedAt: null,
  revokedAt: null,
  ...fields
})

const shown = ({ userId: _u, hash: _h, revokedAt: _r, ...key }: StoredTaskApiKey): TaskApiKey => key

/** The TaskApiKeyStore port's contract (core/tasks/ApiKeyStore.ts), run once per adapter. */
export const TaskApiKeyStoreContract = (name: string, store: Layer.Layer<TaskApiKeyStore, unknown>) =>
  describe(`TaskApiKeyStore contract (${name})`, () =>
    layer(store, { excludeTestServices: true })((it) => {
      it.effect("list shows the user's active keys newest first, without the hash", () =>
        Effect.gen(function* () {
          const keys = yield* TaskApiKeyStore
          const [user, other] = [freshUser(), freshUser()]
          const older = keyOf(user, { name: `Zoë's "script" ✓` })
          const newer = keyOf(user, { createdAt: at(5) })
          const theirs = keyOf(other)
          for (const key of [newer, theirs, older]) yield* keys.create(key)
          const listed = yield* keys.list(user)
          assert.deepStrictEqual(listed, [shown(newer), shown(older)])
          assert.deepStrictEqual(Object.keys(listed[0]!).sort(), ["createdAt", "id", "keyPrefix", "lastUsedAt", "name"])
          assert.deepStrictEqual(yield* keys.list(other), [shown(theirs)])
        })
      )

      it.effect("findActive answers the stored key for its hash until it is revoked", () =>
        Effect.gen(function* () {
          const keys = yield* TaskApiKeyStore
          const user = freshUser()
          const key = keyOf(user)
          yield* keys.create(key)
          // Looked up first, as every request does, so an answer kept from that lookup would show.
          assert.deepStrictEqual(yield* keys.findActive(key.hash), key)
          assert.deepStrictEqual(yield* keys.findActive(key.hash), key)
          assert.isUndefined(yield* keys.findActive(`h_${randomUUID()}`))
          assert.isTrue(yield* keys.revoke(user, key.id, at(9)))
          assert.isUndefined(yield* keys.findActive(key.hash))
          assert.deepStrictEqual(yield* keys.list(user), [])
          assert.isFalse(yield* keys.revoke(user, key.id, at(10)))
        })
      )

      it.effect("revoke refuses another user's key and an unknown id", () =>
        Effect.gen(function* () {
          const keys = yield* TaskApiKeyStore
          const [user, other] = [freshUser(), freshUser()]
          const key = keyOf(user)
          yield* keys.create(key)
          assert.isFalse(yield* keys.revoke(other, key.id, at(1)))
          assert.isFalse(yield* keys.revoke(user, nextId(), at(1)))
          assert.deepStrictEqual(yield* keys.findActive(key.hash), key)
        })
      )

      it.effect("touch records the minute of the last use once uses are flushed, never moving it back", () =>
        Effect.gen(function* () {
          const keys = yield* TaskApiKeyStore
          const user = freshUser()
          const key = keyOf(user)
          yield* keys.create(key)
          yield* keys.touch(key.id, "2030-01-01T10:07:41.250Z")
          yield* keys.flushUses
          assert.strictEqual((yield* keys.list(user))[0]?.lastUsedAt, at(7))
          yield* keys.touch(key.id, at(3))
          yield* keys.touch(nextId(), at(9))
          yield* keys.flushUses
          assert.strictEqual((yield* keys.list(user))[0]?.lastUsedAt, at(7))
          yield* keys.touch(key.id, "2030-01-01T10:12:00.000Z")
          yield* keys.flushUses
          assert.strictEqual((yield* keys.list(user))[0]?.lastUsedAt, at(12))
          assert.strictEqual((yield* keys.findActive(key.hash))?.id, key.id)
        })
      )
    }))
