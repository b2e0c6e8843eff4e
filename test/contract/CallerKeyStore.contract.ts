import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import { monotonicFactory } from "ulid"
import { CallerKeyStore, type ApiKey, type StoredCallerKey } from "../../core/decisions/CallerKeyStore.ts"

// The suite shares one store: every test works in organizations of its own, with hashes of its own.
const freshOrganization = () => `org_${randomUUID()}`
const freshHash = () => `sha256:${randomUUID()}`
const nextId = monotonicFactory()
const at = (minute: number) => `2030-01-01T10:${String(minute).padStart(2, "0")}:00.000Z`

const keyIn = (organizationId: string, fields: Partial<StoredCallerKey> = {}): StoredCallerKey => ({
  id: nextId(),
  organizationId,
  name: "billing-agent",
  keyPrefix: "dcd_abc1",
  hash: freshHash(),
  createdBy: "admin@example.com",
  createdAt: at(0),
  ...fields
})

/** What a list shows of a stored key. */
const shown = ({ organizationId: _org, hash: _hash, ...key }: StoredCallerKey): ApiKey => key

/** The CallerKeyStore port's contract (core/decisions/CallerKeyStore.ts), run once per adapter. */
export const CallerKeyStoreContract = (name: string, store: Layer.Layer<CallerKeyStore, unknown>) =>
  describe(`CallerKeyStore contract (${name})`, () =>
    layer(store, { excludeTestServices: true })((it) => {
      it.effect("list shows the organization's keys newest first, without the organization or the hash", () =>
        Effect.gen(function* () {
          const keys = yield* CallerKeyStore
          const [org, other] = [freshOrganization(), freshOrganization()]
          const older = keyIn(org, { name: `Zoë's "agent" ✓` })
          const newer = keyIn(org, { name: "reporting", createdAt: at(5) })
          const theirs = keyIn(other)
          // Inserted out of order: the order comes from the ids.
          for (const key of [newer, theirs, older]) yield* keys.create(key)
          const listed = yield* keys.list(org)
          assert.deepStrictEqual(listed, [shown(newer), shown(older)])
          assert.deepStrictEqual(Object.keys(listed[0]!).sort(), ["createdAt", "createdBy", "id", "keyPrefix", "name"])
          assert.deepStrictEqual(yield* keys.list(other), [shown(theirs)])
          assert.deepStrictEqual(yield* keys.list(freshOrganization()), [])
        })
      )

      it.effect(
        "findActive answers the stored key, organization and hash included, for the hash of an active key",
        () =>
          Effect.gen(function* () {
            const keys = yield* CallerKeyStore
            const key = keyIn(freshOrganization())
            yield* keys.create(key)
            assert.deepStrictEqual(yield* keys.findActive(key.hash), key)
            assert.isUndefined(yield* keys.findActive(freshHash()))
          })
      )

      it.effect("rotate replaces the hash and the prefix: the old key stops working at once", () =>
        Effect.gen(function* () {
          const keys = yield* CallerKeyStore
          const org = freshOrganization()
          const key = keyIn(org)
          yield* keys.create(key)
          // Looked up first, as every request does, so an answer kept from that lookup would show.
          assert.deepStrictEqual(yield* keys.findActive(key.hash), key)
          const next = { hash: freshHash(), keyPrefix: "dcd_xyz9" }
          const rotated = yield* keys.rotate(org, key.id, next)
          assert.deepStrictEqual(rotated, { ...shown(key), keyPrefix: "dcd_xyz9" })
          assert.isUndefined(yield* keys.findActive(key.hash))
          assert.deepStrictEqual(yield* keys.findActive(next.hash), { ...key, ...next })
          assert.deepStrictEqual(yield* keys.list(org), [rotated!])
        })
      )

      it.effect("rotate answers undefined for an unknown key, another organization's key, or a revoked key", () =>
        Effect.gen(function* () {
          const keys = yield* CallerKeyStore
          const [org, other] = [freshOrganization(), freshOrganization()]
          const key = keyIn(org)
          const revoked = keyIn(org)
          yield* keys.create(key)
          yield* keys.create(revoked)
          yield* keys.revoke(org, revoked.id, at(3))
          assert.isUndefined(yield* keys.rotate(org, nextId(), { hash: freshHash(), keyPrefix: "dcd_new1" }))
          assert.isUndefined(yield* keys.rotate(other, key.id, { hash: freshHash(), keyPrefix: "dcd_new2" }))
          const refused = { hash: freshHash(), keyPrefix: "dcd_new3" }
          assert.isUndefined(yield* keys.rotate(org, revoked.id, refused))
          // Nothing changed: the key still works, the revoked key was not revived under a new hash.
          assert.deepStrictEqual(yield* keys.findActive(key.hash), key)
          assert.isUndefined(yield* keys.findActive(refused.hash))
          assert.deepStrictEqual(yield* keys.list(org), [{ ...shown(revoked), revokedAt: at(3) }, shown(key)])
        })
      )

      it.effect("revoke dates the key once: the key stops working, and revoking again keeps the first revokedAt", () =>
        Effect.gen(function* () {
          const keys = yield* CallerKeyStore
          const org = freshOrganization()
          const key = keyIn(org)
          yield* keys.create(key)
          assert.deepStrictEqual(yield* keys.findActive(key.hash), key)
          assert.deepStrictEqual(yield* keys.revoke(org, key.id, at(10)), { ...shown(key), revokedAt: at(10) })
          assert.isUndefined(yield* keys.findActive(key.hash))
          assert.deepStrictEqual(yield* keys.revoke(org, key.id, at(20)), { ...shown(key), revokedAt: at(10) })
          assert.deepStrictEqual(yield* keys.list(org), [{ ...shown(key), revokedAt: at(10) }])
        })
      )

      it.effect("revoke answers undefined for an unknown key or another organization's key, which keeps working", () =>
        Effect.gen(function* () {
          const keys = yield* CallerKeyStore
          const [org, other] = [freshOrganization(), freshOrganization()]
          const key = keyIn(org)
          yield* keys.create(key)
          assert.isUndefined(yield* keys.revoke(other, key.id, at(10)))
          assert.isUndefined(yield* keys.revoke(org, nextId(), at(10)))
          assert.deepStrictEqual(yield* keys.findActive(key.hash), key)
        })
      )

      it.effect("touch records the minute of the last use once uses are flushed; an unknown id is ignored", () =>
        Effect.gen(function* () {
          const keys = yield* CallerKeyStore
          const org = freshOrganization()
          const key = keyIn(org)
          yield* keys.create(key)
          yield* keys.touch(key.id, "2030-01-01T10:07:23.456Z")
          yield* keys.touch(key.id, "2030-01-01T10:07:59.999Z")
          yield* keys.flushUses
          assert.deepStrictEqual(yield* keys.list(org), [{ ...shown(key), lastUsedAt: at(7) }])
          yield* keys.touch(key.id, "2030-01-01T10:08:00.001Z")
          yield* keys.touch(nextId(), at(9))
          yield* keys.flushUses
          assert.deepStrictEqual(yield* keys.list(org), [{ ...shown(key), lastUsedAt: at(8) }])
          assert.strictEqual((yield* keys.findActive(key.hash))?.id, key.id)
        })
      )

      it.effect("a last use never moves back, and the key keeps working while uses are noted", () =>
        Effect.gen(function* () {
          const keys = yield* CallerKeyStore
          const org = freshOrganization()
          const key = keyIn(org)
          yield* keys.create(key)
          yield* keys.touch(key.id, at(30))
          yield* keys.flushUses
          yield* keys.touch(key.id, at(20))
          yield* keys.flushUses
          assert.deepStrictEqual(yield* keys.list(org), [{ ...shown(key), lastUsedAt: at(30) }])
          for (let i = 0; i < 3; i++) assert.strictEqual((yield* keys.findActive(key.hash))?.id, key.id)
        })
      )

      it.effect("a key created already used and revoked keeps those dates and is not active", () =>
        Effect.gen(function* () {
          const keys = yield* CallerKeyStore
          const org = freshOrganization()
          const key = keyIn(org, { lastUsedAt: at(1), revokedAt: at(2) })
          yield* keys.create(key)
          assert.deepStrictEqual(yield* keys.list(org), [shown(key)])
          assert.isUndefined(yield* keys.findActive(key.hash))
        })
      )
    }))
