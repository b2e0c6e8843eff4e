import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { OrganizationStatusesMemory } from "../../adapters/memory/OrganizationStatusesMemory.ts"
import { TestClock } from "effect/testing"
import { RecordStoreMemory } from "../../adapters/memory/tasks/RecordStoreMemory.ts"
import { SessionStoreMemory } from "../../adapters/memory/tasks/SessionStoreMemory.ts"
import { TaskApiKeyStoreMemory } from "../../adapters/memory/tasks/TaskApiKeyStoreMemory.ts"
import { UpstreamError } from "../../core/kernel/Errors.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"
import { RecordStore } from "../../core/tasks/RecordStore.ts"
import { callerRecordTtl, TaskAccess } from "../../core/tasks/TaskAccess.ts"

const machine = { key: "machine-key-for-tests-0123456789", email: "ops-bot@example.com", name: "Ops Bot" }

/** The record store in memory, counting the collaborator reads and failing them while `down` is set. */
const countingStore = Layer.effect(
  RecordStore,
  Effect.gen(function* () {
    const store = yield* RecordStore
    const reads = { count: 0, down: false }
    const read = <A>(table: string, effect: Effect.Effect<A, UpstreamError>): Effect.Effect<A, UpstreamError> =>
      Effect.suspend(() => {
        if (table !== "collaborators") return effect
        reads.count++
        return reads.down ? Effect.fail(new UpstreamError({ message: "upstream down" })) : effect
      })
    Reads.current = reads
    return RecordStore.of({
      ...store,
      get: (table, id) => read(table, store.get(table, id)),
      select: (table, where, options) => read(table, store.select(table, where, options))
    })
  })
).pipe(Layer.provide(RecordStoreMemory))

const Reads: { current: { count: number; down: boolean } } = { current: { count: 0, down: false } }

const access = TaskAccess.layer({ machineKeys: [machine] }).pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      countingStore,
      TaskApiKeyStoreMemory,
      SessionStoreMemory,
      OrganizationStatusesMemory,
      IdGeneratorUlid
    )
  )
)

describe("TaskAccess: who a credential acts for", () => {
  it.effect("reads a key's collaborator once per while, yet refuses a revoked key at once", () =>
    Effect.gen(function* () {
      const tasks = yield* TaskAccess
      const store = yield* RecordStore
      const ada = yield* store.create("collaborators", { email: "ada@example.com", name: "Ada" })
      const user = { id: ada.id, email: "ada@example.com", name: "Ada" }
      const { key, apiKey } = yield* tasks.createApiKey(user, "laptop")
      const before = Reads.current.count
      for (let i = 0; i < 5; i++) assert.deepStrictEqual(yield* tasks.authenticateKey(key), user)
      assert.strictEqual(Reads.current.count - before, 1)

      // Past the while, the record is read again: a change upstream shows.
      yield* store.update("collaborators", ada.id, { name: "Ada L." })
      assert.strictEqual((yield* tasks.authenticateKey(key))?.name, "Ada")
      yield* TestClock.adjust(Duration.sum(callerRecordTtl, Duration.seconds(1)))
      assert.strictEqual((yield* tasks.authenticateKey(key))?.name, "Ada L.")
      assert.strictEqual(Reads.current.count - before, 2)

      // The credential is checked on every request: revoked is refused though its person is remembered.
      yield* tasks.revokeApiKey(user, apiKey.id)
      assert.isUndefined(yield* tasks.authenticateKey(key))
    }).pipe(Effect.provide(access))
  )

  it.effect("remembers neither a failed read nor a missing person", () =>
    Effect.gen(function* () {
      const tasks = yield* TaskAccess
      const store = yield* RecordStore
      const bob = yield* store.create("collaborators", { email: "bob@example.com", name: "Bob" })
      const { key } = yield* tasks.createApiKey({ id: bob.id, email: "bob@example.com", name: "Bob" }, "ci")
      Reads.current.down = true
      const failed = yield* Effect.flip(tasks.authenticateKey(key))
      assert.strictEqual(failed._tag, "UpstreamError")
      Reads.current.down = false
      assert.strictEqual((yield* tasks.authenticateKey(key))?.email, "bob@example.com")

      // A machine key's person is made on first use and then remembered.
      const before = Reads.current.count
      const ops = yield* tasks.authenticateKey(machine.key)
      assert.strictEqual(ops?.email, machine.email)
      assert.deepStrictEqual(yield* tasks.authenticateKey(machine.key), ops)
      assert.strictEqual(Reads.current.count - before, 1)
    }).pipe(Effect.provide(access))
  )
})
