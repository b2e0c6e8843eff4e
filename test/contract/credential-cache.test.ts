import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, PubSub, type Scope } from "effect"
import type { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { monotonicFactory } from "ulid"
import { makeCredentialCache, type CredentialCache } from "../../adapters/sql/CredentialCache.ts"
import { CredentialNotices, CredentialNoticesSql, type CredentialNotice } from "../../adapters/sql/CredentialNotices.ts"
import type { DatabaseServices } from "../../adapters/sql/Database.ts"
import { CallerKeyStoreSql } from "../../adapters/sql/decisions/CallerKeyStoreSql.ts"
import { decisionsMigrations } from "../../adapters/sql/decisions/migrations.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { tasksMigrations } from "../../adapters/sql/tasks/migrations.ts"
import { TaskApiKeyStoreSql } from "../../adapters/sql/tasks/TaskApiKeyStoreSql.ts"
import { CallerKeyStore, type StoredCallerKey } from "../../core/decisions/CallerKeyStore.ts"
import { TaskApiKeyStore, type StoredTaskApiKey } from "../../core/tasks/ApiKeyStore.ts"
import { sqlBackendsBothWays, type SqlBackend } from "../support/Databases.ts"
import { acknowledgement as acknowledged, instanceOn, statementsOf, twoWaysIn } from "../support/TwoInstances.ts"

/**
 * Two server instances on one database: each is the SQL key stores built on their own (their own caches and,
 * on a Postgres server, their own pool and listening connection). A key revoked or rotated on one is refused
 * by the other at its next request once the change has committed; on a Postgres server "once" is when the
 * other's listener has acted on the notification, which it acknowledges on `heard`.
 */

const nextId = monotonicFactory()
const freshHash = () => `sha256:${randomUUID()}`
const now = "2030-01-01T10:07:30.000Z"

const callerKey = (): StoredCallerKey => ({
  id: nextId(),
  organizationId: `org_${randomUUID()}`,
  name: "billing-agent",
  keyPrefix: "dcd_abc1",
  hash: freshHash(),
  createdBy: "admin@example.com",
  createdAt: "2030-01-01T10:00:00.000Z"
})

const taskKey = (): StoredTaskApiKey => ({
  id: nextId(),
  userId: `usr${randomUUID().replace(/-/g, "").slice(0, 14)}`,
  name: "laptop",
  keyPrefix: "tsk_abcdefgh",
  hash: freshHash(),
  createdAt: "2030-01-01T10:00:00.000Z",
  lastUsedAt: null,
  revokedAt: null
})

interface Instance {
  readonly callerKeys: CallerKeyStore["Service"]
  readonly taskKeys: TaskApiKeyStore["Service"]
  readonly notices: CredentialNotices["Service"]
}

const instanceLayer = Layer.mergeAll(CallerKeyStoreSql, TaskApiKeyStoreSql, CredentialNoticesSql)

const instance = (database: Context.Context<DatabaseServices>) =>
  Effect.map(instanceOn(instanceLayer, database), (context) => ({
    callerKeys: Context.get(context, CallerKeyStore),
    taskKeys: Context.get(context, TaskApiKeyStore),
    notices: Context.get(context, CredentialNotices)
  }))

const migrations = Layer.merge(
  migrationsLayer("decisions", decisionsMigrations),
  migrationsLayer("tasks", tasksMigrations)
)

const twoInstances = (backend: SqlBackend) =>
  Effect.gen(function* () {
    const { first, second, sql } = yield* twoWaysIn(backend, migrations)
    const a = yield* instance(first)
    const b = yield* instance(second)
    assert.isTrue(a.notices.live() && b.notices.live(), "both instances listen before their first request")
    return { a, b, sql }
  })

/** What a caller request does with its key: look it up, and note the use when it is active. */
const callerRequest = (instance: Instance, key: StoredCallerKey) =>
  Effect.gen(function* () {
    const found = yield* instance.callerKeys.findActive(key.hash)
    if (found !== undefined) yield* instance.callerKeys.touch(found.id, now)
    return found?.id
  })

const taskRequest = (instance: Instance, key: StoredTaskApiKey) =>
  Effect.gen(function* () {
    const found = yield* instance.taskKeys.findActive(key.hash)
    if (found !== undefined) yield* instance.taskKeys.touch(found.id, now)
    return found?.id
  })

const acknowledgement = (instance: Instance, backend: SqlBackend, expected: CredentialNotice) =>
  acknowledged(instance.notices, backend, expected)

/** The row's tuple version: any UPDATE, even one writing the same values, changes it. */
const rowVersion = (sql: SqlClient.SqlClient, table: "decisions.caller_keys" | "tasks.api_keys", id: string) =>
  Effect.map(
    sql<{ readonly xmin: string; readonly last_used_at: Date | null }>`
      SELECT xmin::text AS xmin, last_used_at FROM ${sql(table.split(".")[0]!)}.${sql(table.split(".")[1]!)}
      WHERE id = ${id}`,
    (rows) => rows[0]!
  )

const scoped = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.scoped(effect)

for (const backend of sqlBackendsBothWays) {
  describe(`credential caches across two instances (${backend.name})`, () => {
    it.live("a caller key revoked on one instance is refused by the other at its next request", () =>
      scoped(
        Effect.gen(function* () {
          const { a, b } = yield* twoInstances(backend)
          const key = callerKey()
          yield* a.callerKeys.create(key)

          const [first, read] = yield* statementsOf(callerRequest(b, key))
          assert.strictEqual(first, key.id)
          assert.lengthOf(read, 1, "the first request reads the key")
          assert.match(read[0]!, /^\s*SELECT/i)
          const [second, none] = yield* statementsOf(callerRequest(b, key))
          assert.strictEqual(second, key.id)
          assert.deepStrictEqual(none, [], "the next request neither reads nor writes")

          const heard = yield* acknowledgement(b, backend, { scope: "decisions.caller_keys", id: key.id })
          assert.isDefined(yield* a.callerKeys.revoke(key.organizationId, key.id, now))
          yield* heard
          assert.isUndefined(yield* callerRequest(b, key))
          assert.isUndefined(yield* callerRequest(a, key))
        })
      )
    )

    it.live("a caller key rotated on one instance: the old key is refused by the other, the new one works", () =>
      scoped(
        Effect.gen(function* () {
          const { a, b } = yield* twoInstances(backend)
          const key = callerKey()
          yield* a.callerKeys.create(key)
          assert.strictEqual(yield* callerRequest(b, key), key.id)
          assert.deepStrictEqual((yield* statementsOf(callerRequest(b, key)))[1], [])

          const heard = yield* acknowledgement(b, backend, { scope: "decisions.caller_keys", id: key.id })
          const next = { hash: freshHash(), keyPrefix: "dcd_new1" }
          assert.isDefined(yield* a.callerKeys.rotate(key.organizationId, key.id, next))
          yield* heard
          assert.isUndefined(yield* callerRequest(b, key))
          assert.strictEqual(yield* callerRequest(b, { ...key, ...next }), key.id)
        })
      )
    )

    it.live("a task API key revoked on one instance is refused by the other at its next request", () =>
      scoped(
        Effect.gen(function* () {
          const { a, b } = yield* twoInstances(backend)
          const key = taskKey()
          yield* a.taskKeys.create(key)
          assert.strictEqual(yield* taskRequest(b, key), key.id)
          assert.deepStrictEqual((yield* statementsOf(taskRequest(b, key)))[1], [])

          const heard = yield* acknowledgement(b, backend, { scope: "tasks.api_keys", id: key.id })
          assert.isTrue(yield* a.taskKeys.revoke(key.userId, key.id, now))
          yield* heard
          assert.isUndefined(yield* taskRequest(b, key))
        })
      )
    )

    it.live("an authenticated request writes nothing: the last use is written once per minute, in the background", () =>
      scoped(
        Effect.gen(function* () {
          const { a, sql } = yield* twoInstances(backend)
          const caller = callerKey()
          const task = taskKey()
          yield* a.callerKeys.create(caller)
          yield* a.taskKeys.create(task)
          const callerBefore = yield* rowVersion(sql, "decisions.caller_keys", caller.id)
          const taskBefore = yield* rowVersion(sql, "tasks.api_keys", task.id)
          for (let i = 0; i < 5; i++) {
            const [, callerStatements] = yield* statementsOf(callerRequest(a, caller))
            const [, taskStatements] = yield* statementsOf(taskRequest(a, task))
            for (const text of [...callerStatements, ...taskStatements]) assert.notMatch(text, /UPDATE|INSERT|DELETE/i)
          }
          assert.deepStrictEqual(yield* rowVersion(sql, "decisions.caller_keys", caller.id), callerBefore)
          assert.deepStrictEqual(yield* rowVersion(sql, "tasks.api_keys", task.id), taskBefore)

          // The flush writes each key once, to the minute; more uses in that minute write nothing more.
          yield* a.callerKeys.flushUses
          yield* a.taskKeys.flushUses
          const callerAfter = yield* rowVersion(sql, "decisions.caller_keys", caller.id)
          const taskAfter = yield* rowVersion(sql, "tasks.api_keys", task.id)
          assert.notStrictEqual(callerAfter.xmin, callerBefore.xmin)
          assert.strictEqual(callerAfter.last_used_at?.toISOString(), "2030-01-01T10:07:00.000Z")
          assert.strictEqual(taskAfter.last_used_at?.toISOString(), "2030-01-01T10:07:00.000Z")
          yield* callerRequest(a, caller)
          yield* taskRequest(a, task)
          yield* a.callerKeys.flushUses
          yield* a.taskKeys.flushUses
          assert.deepStrictEqual(yield* rowVersion(sql, "decisions.caller_keys", caller.id), callerAfter)
          assert.deepStrictEqual(yield* rowVersion(sql, "tasks.api_keys", task.id), taskAfter)
        })
      )
    )

    if (backend.name === "postgres") {
      it.live("while an instance is not listening it reads every key, and a change made meanwhile is refused", () =>
        scoped(
          Effect.gen(function* () {
            const { a, b, sql } = yield* twoInstances(backend)
            const key = callerKey()
            yield* a.callerKeys.create(key)
            assert.strictEqual(yield* callerRequest(b, key), key.id)
            assert.deepStrictEqual((yield* statementsOf(callerRequest(b, key)))[1], [])

            const liveness = yield* PubSub.subscribe(b.notices.liveness)
            yield* sql`
              SELECT pg_terminate_backend(pid) FROM pg_stat_activity
              WHERE datname = current_database() AND query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()`
            while (yield* PubSub.take(liveness)) {
              /* until b has noticed its listener is gone */
            }
            // Whether b is still down or already listening again, the kept answer is gone: the key is read.
            const [again, read] = yield* statementsOf(callerRequest(b, key))
            assert.strictEqual(again, key.id)
            assert.lengthOf(read, 1)
            // A revocation whose notice b may never hear: b still refuses the key.
            assert.isDefined(yield* a.callerKeys.revoke(key.organizationId, key.id, now))
            assert.isUndefined(yield* callerRequest(b, key))
          })
        )
      )
    }
  })
}

describe("CredentialCache", () => {
  it.live("keeps at most its capacity, least recently used out first, and never keeps a miss", () =>
    scoped(
      Effect.gen(function* () {
        const { first } = yield* twoWaysIn(sqlBackendsBothWays[0]!, migrations)
        const notices = yield* Layer.build(CredentialNoticesSql).pipe(Effect.provideContext(first))
        const loads: Array<string> = []
        const load = (key: string, found: boolean) =>
          Effect.sync(() => {
            loads.push(key)
            return found ? { id: key } : undefined
          })
        const cache: CredentialCache<{ readonly id: string }> = yield* makeCredentialCache<{ readonly id: string }>({
          scope: "test.keys",
          idOf: (value) => value.id,
          capacity: 2
        }).pipe(Effect.provideContext(Context.merge(first, notices)))
        for (const key of ["k1", "k2", "k1", "k3", "k1", "k2"]) yield* cache.get(key, load(key, true))
        // k1 k2 read; k1 kept; k3 read and k2 (least recently used) out; k1 kept; k2 read again.
        assert.deepStrictEqual(loads, ["k1", "k2", "k3", "k2"])
        loads.length = 0
        for (let i = 0; i < 3; i++) assert.isUndefined(yield* cache.get("unknown", load("unknown", false)))
        assert.deepStrictEqual(loads, ["unknown", "unknown", "unknown"])
      })
    )
  )
})
