import { Context, Effect, Layer } from "effect"
import { TaskApiKeyStoreMemory } from "../../adapters/memory/tasks/TaskApiKeyStoreMemory.ts"
import { OrganizationStatusesMemory } from "../../adapters/memory/OrganizationStatusesMemory.ts"
import { ProducerOutboxMemory } from "../../adapters/memory/ProducerOutboxMemory.ts"
import { OrganizationStatusesSql } from "../../adapters/sql/OrganizationStatusesSql.ts"
import { RecordStoreMemory } from "../../adapters/memory/tasks/RecordStoreMemory.ts"
import { SessionStoreMemory } from "../../adapters/memory/tasks/SessionStoreMemory.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { tasksMigrations } from "../../adapters/sql/tasks/migrations.ts"
import { RecordStoreSql } from "../../adapters/sql/tasks/RecordStoreSql.ts"
import { SessionStoreSql } from "../../adapters/sql/tasks/SessionStoreSql.ts"
import { TaskApiKeyStoreSql } from "../../adapters/sql/tasks/TaskApiKeyStoreSql.ts"
import { TasksOutboxSql, TasksUseCases } from "../../apps/server/tasks/TasksRuntime.ts"
import { tasksRoutes } from "../../apps/server/tasks/TasksRoutes.ts"
import type { TasksWebSignIn } from "../../adapters/http/tasks/SignIn.ts"
import { Readiness } from "../../core/kernel/index.ts"
import type { TaskApiKeyStore } from "../../core/tasks/ApiKeyStore.ts"
import type { ProducerOutbox } from "../../core/events/ProducerOutbox.ts"
import type { MachineKey } from "../../core/tasks/MachineKeys.ts"
import type { RecordStore } from "../../core/tasks/RecordStore.ts"
import type { SessionStore } from "../../core/tasks/SessionStore.ts"
import type { TaskInbox } from "../../core/tasks/TaskInbox.ts"
import type { SqlBackend } from "./Databases.ts"
import { serveForTest } from "./Http.ts"
import { tasksRenderer } from "../../adapters/http/tasks/TasksErrors.ts"
import { testServiceSettings } from "./ServiceSettings.ts"
import { IdempotencyStoreMemory } from "../../adapters/memory/IdempotencyStoreMemory.ts"
import { TransactionsMemory } from "../../adapters/memory/TransactionsMemory.ts"
import { IdempotencyStoreSql } from "../../adapters/sql/IdempotencyStoreSql.ts"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import type { IdempotencyStore } from "../../core/idempotency/IdempotencyStore.ts"
import type { Transactions } from "../../core/kernel/Transactions.ts"
import type { OrganizationStatuses } from "../../core/events/OrganizationStatuses.ts"
import { airtableRecordStore, type AirtableOnStandInOptions } from "./AirtableStore.ts"

export type TasksData = Layer.Layer<
  | RecordStore
  | TaskApiKeyStore
  | SessionStore
  | ProducerOutbox
  | OrganizationStatuses
  | IdempotencyStore
  | Transactions,
  unknown
>

export const tasksMemoryData: TasksData = Layer.mergeAll(
  RecordStoreMemory,
  TaskApiKeyStoreMemory,
  SessionStoreMemory,
  ProducerOutboxMemory,
  OrganizationStatusesMemory,
  IdempotencyStoreMemory,
  TransactionsMemory
)

/** The SQL adapters on a freshly migrated `tasks` schema of the backend's fresh database. */
export const tasksSqlData = (backend: SqlBackend): TasksData =>
  Layer.mergeAll(
    RecordStoreSql,
    TaskApiKeyStoreSql,
    SessionStoreSql,
    TasksOutboxSql,
    OrganizationStatusesSql("tasks"),
    IdempotencyStoreSql("tasks"),
    TransactionsSql
  ).pipe(Layer.provide(migrationsLayer("tasks", tasksMigrations)), Layer.provide(backend.layer))

/** As `tasksSqlData`, the records in an Airtable base of a stand-in (test/support/AirtableStore.ts). */
export const tasksAirtableData = (backend: SqlBackend, options: AirtableOnStandInOptions = {}): TasksData =>
  Layer.mergeAll(
    airtableRecordStore(options),
    TaskApiKeyStoreSql,
    SessionStoreSql,
    TasksOutboxSql,
    OrganizationStatusesSql("tasks"),
    IdempotencyStoreSql("tasks"),
    TransactionsSql
  ).pipe(Layer.provide(migrationsLayer("tasks", tasksMigrations)), Layer.provide(backend.layer))

export const publicUrl = "https://tasks.example.com"
export const opsKey: MachineKey = {
  key: "machine-key-for-tests-0123456789",
  email: "ops-bot@example.com",
  name: "Ops Bot"
}

/** The task inbox use cases over a data layer (its ports also provided, for seeding and inspection). */
export const tasksStack = (data: TasksData) => TasksUseCases({ publicUrl, machineKeys: [opsKey] }, data)

const settings = testServiceSettings()

/** Web sign-in left unconfigured: `/auth/login` answers 501 (test/e2e/openid-connect.test.ts signs in for real). */
export const webSignInOff: TasksWebSignIn = {
  publicUrl,
  hubIssuer: "https://hub.example.com",
  clientId: "tasks",
  clientSecret: undefined,
  secretsKey: undefined,
  allowHttp: false
}

export class TasksServer extends Context.Service<TasksServer, { readonly baseUrl: string }>()("test/TasksServer") {}

/** The task inbox's routes on a loopback port, over the stack, which stays available to the test. */
export const tasksServer = (data: TasksData, web: TasksWebSignIn = webSignInOff, port = 0) =>
  Layer.effect(
    TasksServer,
    Effect.gen(function* () {
      const context = yield* Effect.context<TaskInbox | IdempotencyStore | Transactions>()
      return yield* serveForTest(
        tasksRoutes(settings, web).pipe(
          Layer.provide(Layer.succeedContext(context)),
          Layer.provide(Layer.succeed(Readiness)({ check: Effect.void }))
        ),
        { render: tasksRenderer, port }
      )
    })
  ).pipe(Layer.provideMerge(tasksStack(data)))
