import { Effect, Layer, Option, Redacted, Result } from "effect"
import { OrganizationStatusesSql } from "../../../adapters/sql/OrganizationStatusesSql.ts"
import { ProducerOutboxSql } from "../../../adapters/sql/ProducerOutboxSql.ts"
import { IdempotencyStoreSql } from "../../../adapters/sql/IdempotencyStoreSql.ts"
import { migrationsLayer } from "../../../adapters/sql/Migrator.ts"
import { tasksMigrations } from "../../../adapters/sql/tasks/migrations.ts"
import { SessionStoreSql } from "../../../adapters/sql/tasks/SessionStoreSql.ts"
import { TaskApiKeyStoreSql } from "../../../adapters/sql/tasks/TaskApiKeyStoreSql.ts"
import { IdGeneratorUlid } from "../../../core/kernel/Ids.ts"
import { parseMachineKeys } from "../../../core/tasks/MachineKeys.ts"
import type { RecordStore } from "../../../core/tasks/RecordStore.ts"
import { TaskInboxLayer, type TaskInboxConfig } from "../../../core/tasks/TaskInbox.ts"
import type { ServerConfig } from "../Config.ts"
import { ProducerRelayWorker, type InProcessHub, type RelaySettings } from "../ProducerRelayRuntime.ts"

/** The task inbox's event outbox, `tasks.outbox`. */
export const TasksOutboxSql = ProducerOutboxSql({ schema: "tasks", table: "outbox" })

/**
 * The task inbox's data in its own Postgres schema, `tasks` (API keys, sessions, event outbox, organizations'
 * statuses, idempotency records), its records in the store given. Needs the database's one `Transactions`: a
 * task's change and the event it implies commit together.
 */
export const TasksDataWith = <E, R>(records: Layer.Layer<RecordStore, E, R>) =>
  Layer.mergeAll(
    records,
    TaskApiKeyStoreSql,
    SessionStoreSql,
    TasksOutboxSql,
    OrganizationStatusesSql("tasks"),
    IdempotencyStoreSql("tasks")
  )

/** `TasksDataWith(records)` on a database whose `tasks` schema is migrated first: what the server runs on. */
export const TasksDataMigrated = <E, R>(records: Layer.Layer<RecordStore, E, R>) =>
  TasksDataWith(records).pipe(Layer.provide(migrationsLayer("tasks", tasksMigrations)))

/** The public address of the task inbox: TASKS_PUBLIC_URL, else the listener's own address. */
export const tasksPublicUrl = (config: ServerConfig, port: number): string =>
  Option.getOrElse(
    config.tasksPublicUrl,
    // A listener on every address (0.0.0.0, ::) is reached on this machine at 127.0.0.1.
    () => `http://${["0.0.0.0", "::", "[::]"].includes(config.host) ? "127.0.0.1" : config.host}:${port}`
  ).replace(/\/+$/, "")

/**
 * The task inbox's use cases over the data adapters given (also provided, for inspection and for the routes'
 * own needs): the one composition the bundled server, the tests and embedders use. `data` is `TasksDataWith(records)`
 * (with `RecordStoreSql`, its records in its own tables), or memory adapters.
 */
export const TasksUseCases = <Data, E, R>(config: TaskInboxConfig, data: Layer.Layer<Data, E, R>) =>
  TaskInboxLayer(config).pipe(Layer.provideMerge(Layer.merge(data, IdGeneratorUlid)))

/**
 * The task inbox's use cases over the data given (also provided), its operator machine keys parsed from
 * TASKS_MACHINE_KEYS: a malformed entry stops the start (the message names the entry's position, never a key).
 */
export const TasksUseCasesWithKeys = <Data, E, R>(
  settings: { readonly publicUrl: string; readonly machineKeys: Redacted.Redacted<string> },
  data: Layer.Layer<Data, E, R>
) =>
  Layer.unwrap(
    Effect.gen(function* () {
      const keys = parseMachineKeys(Redacted.value(settings.machineKeys))
      if (Result.isFailure(keys)) return yield* Effect.die(new Error(`TASKS_MACHINE_KEYS: ${keys.failure}`))
      return TasksUseCases({ publicUrl: settings.publicUrl, machineKeys: keys.success }, data)
    })
  )

/** Relays the task inbox's event outbox to the hub, signed with TASKS_SIGNING_KEY. */
export const TasksEventRelay = <E = never, R = never>(
  options: RelaySettings & { readonly publisher?: InProcessHub<E, R> | undefined }
) =>
  ProducerRelayWorker({
    service: "tasks",
    keySetting: "TASKS_SIGNING_KEY",
    notificationType: "tasks.notification.created",
    ...options
  })
