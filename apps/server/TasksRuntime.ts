import { Effect, Layer, Option, Redacted, Result } from "effect"
import { RecordStoreSql } from "../../adapters/sql/tasks/RecordStoreSql.ts"
import { SessionStoreSql } from "../../adapters/sql/tasks/SessionStoreSql.ts"
import { TaskApiKeyStoreSql } from "../../adapters/sql/tasks/TaskApiKeyStoreSql.ts"
import { TaskEventOutboxSql } from "../../adapters/sql/tasks/TaskEventOutboxSql.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"
import { parseMachineKeys } from "../../core/tasks/MachineKeys.ts"
import { Tasks } from "../../core/tasks/Tasks.ts"
import type { ServerConfig } from "./Config.ts"

/** The task inbox's data in its own Postgres schema, `tasks` (records, API keys, sessions, event outbox). */
export const TasksDataSql = Layer.mergeAll(RecordStoreSql, TaskApiKeyStoreSql, SessionStoreSql, TaskEventOutboxSql)

/** The public address of the task inbox: TASKS_PUBLIC_URL, else the listener's own address. */
export const tasksPublicUrl = (config: ServerConfig, port: number): string =>
  Option.getOrElse(config.tasksPublicUrl, () => `http://${config.host}:${port}`).replace(/\/+$/, "")

/**
 * The task inbox use cases over the SQL adapters (also provided). A malformed TASKS_MACHINE_KEYS stops the server at start
 * (the message names the entry's position, never a key).
 */
export const TasksSql = (options: { readonly publicUrl: string; readonly machineKeys: Redacted.Redacted<string> }) =>
  Layer.unwrap(
    Effect.gen(function* () {
      const keys = parseMachineKeys(Redacted.value(options.machineKeys))
      if (Result.isFailure(keys)) return yield* Effect.die(new Error(`TASKS_MACHINE_KEYS: ${keys.failure}`))
      return Tasks.layer({ publicUrl: options.publicUrl, machineKeys: keys.success })
    })
  ).pipe(Layer.provideMerge(Layer.merge(TasksDataSql, IdGeneratorUlid)))
