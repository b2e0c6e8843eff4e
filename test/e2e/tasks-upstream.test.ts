import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TaskApiKeyStoreMemory } from "../../adapters/memory/tasks/TaskApiKeyStoreMemory.ts"
import { SessionStoreMemory } from "../../adapters/memory/tasks/SessionStoreMemory.ts"
import { OrganizationStatusesMemory } from "../../adapters/memory/OrganizationStatusesMemory.ts"
import { ProducerOutboxMemory } from "../../adapters/memory/ProducerOutboxMemory.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { tasksMigrations } from "../../adapters/sql/tasks/migrations.ts"
import { RecordStoreSql } from "../../adapters/sql/tasks/RecordStoreSql.ts"
import { issueSecret } from "../../core/auth/IssuedSecret.ts"
import { UpstreamError } from "../../core/kernel/Errors.ts"
import { TaskApiKeyStore } from "../../core/tasks/ApiKeyStore.ts"
import * as Q from "../../core/tasks/Query.ts"
import { RecordStore } from "../../core/tasks/RecordStore.ts"
import { pglite } from "../support/Databases.ts"
import { request } from "../support/Http.ts"
import { opsKey, tasksServer, TasksServer } from "../support/TasksStack.ts"
import { IdempotencyStoreMemory } from "../../adapters/memory/IdempotencyStoreMemory.ts"
import { TransactionsMemory } from "../../adapters/memory/TransactionsMemory.ts"

/** An upstream that fails every call, with the kind of text an upstream error carries. */
const failure = () =>
  new UpstreamError({
    message: "ECONNREFUSED 10.0.0.7:5432 at /srv/app/node_modules/pg/lib/client.js (AIRTABLE_API_KEY)",
    cause: new Error("connect ECONNREFUSED")
  })
const FailingRecordStore = Layer.succeed(RecordStore)({
  create: () => Effect.fail(failure()),
  createUnread: () => Effect.fail(failure()),
  inUnits: false,
  get: () => Effect.fail(failure()),
  update: () => Effect.fail(failure()),
  updateIf: () => Effect.fail(failure()),
  updateIfAndWrite: () => Effect.fail(failure()),
  select: () => Effect.fail(failure())
})

const userKey = issueSecret("tsk_")

describe("task inbox when the record store fails", () =>
  layer(
    tasksServer(
      Layer.mergeAll(
        FailingRecordStore,
        TaskApiKeyStoreMemory,
        SessionStoreMemory,
        ProducerOutboxMemory,
        OrganizationStatusesMemory,
        IdempotencyStoreMemory,
        TransactionsMemory
      )
    ),
    {
      excludeTestServices: true
    }
  )((it) => {
    it.effect("answers 502 {error} with a safe message, for a user key and a machine key alike", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TasksServer
        const keys = yield* TaskApiKeyStore
        yield* keys.create({
          id: "01JTESTKEY0000000000000000",
          userId: "usrAlice000000000",
          name: "tests",
          keyPrefix: userKey.displayPrefix,
          hash: userKey.hash,
          createdAt: new Date().toISOString(),
          lastUsedAt: null,
          revokedAt: null
        })
        for (const key of [userKey.plaintext, opsKey.key]) {
          for (const [method, path] of [
            ["GET", "/api/tasks"],
            ["GET", "/api/proposals"],
            ["GET", "/api/clients"]
          ] as const) {
            const answer = yield* request(`${baseUrl}${path}`, { method, headers: { "x-api-key": key } })
            assert.strictEqual(answer.status, 502, path)
            assert.deepStrictEqual(answer.json, { error: "The record store is not responding. Retry later." })
          }
        }
        const shortLink = yield* request(`${baseUrl}/s/abcdefgh`)
        assert.strictEqual(shortLink.status, 502)
      })
    )
  }))

describe("RecordStoreSql when the database fails", () =>
  layer(
    RecordStoreSql.pipe(
      Layer.provideMerge(migrationsLayer("tasks", tasksMigrations)),
      Layer.provideMerge(pglite.layer)
    ),
    { excludeTestServices: true }
  )((it) => {
    it.effect("every operation fails with an UpstreamError whose message names no vendor", () =>
      Effect.gen(function* () {
        const records = yield* RecordStore
        const sql = yield* SqlClient.SqlClient
        const task = yield* records.create("tasks", { title: "before" })
        yield* sql`ALTER TABLE tasks.records RENAME TO records_gone`
        const attempts: ReadonlyArray<Effect.Effect<unknown, UpstreamError>> = [
          records.create("tasks", { title: "x" }),
          records.get("tasks", task.id),
          records.update("tasks", task.id, { title: "y" }),
          records.select("tasks", Q.all)
        ]
        for (const attempt of attempts) {
          const error = yield* Effect.flip(attempt)
          assert.strictEqual(error._tag, "UpstreamError")
          assert.strictEqual(error.message, "The record store is not responding.")
        }
      })
    )
  }))
