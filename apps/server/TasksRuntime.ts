import { Effect, Layer, Option, Redacted, Result, Schedule } from "effect"
import { HubEventPublisherHttp } from "../../adapters/http/HubEventPublisherHttp.ts"
import { RecordStoreSql } from "../../adapters/sql/tasks/RecordStoreSql.ts"
import { SessionStoreSql } from "../../adapters/sql/tasks/SessionStoreSql.ts"
import { TaskApiKeyStoreSql } from "../../adapters/sql/tasks/TaskApiKeyStoreSql.ts"
import { TaskEventOutboxSql } from "../../adapters/sql/tasks/TaskEventOutboxSql.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"
import { EventRelay } from "../../core/tasks/EventRelay.ts"
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

/**
 * Relays the task inbox's event outbox to the hub every `pollMillis` (document 3: a delegation notifies the
 * new assignee through the hub's feed). Events are claimed with leases in the database, so several servers
 * may relay side by side. Without a signing key nothing is sent (the hub would refuse it): the events wait
 * in the outbox, nothing is lost, and they go out once the key is configured.
 */
export const TasksEventRelay = (options: {
  readonly hubUrl: string
  readonly signingKey: Redacted.Redacted<string> | undefined
  readonly pollMillis: number
}) =>
  options.signingKey === undefined
    ? Layer.effectDiscard(
        Effect.logWarning("TASKS_SIGNING_KEY is not set: task events wait in the outbox and are not sent to the hub.")
      )
    : Layer.effectDiscard(
        Effect.gen(function* () {
          const relay = yield* EventRelay
          yield* relay.relayDue().pipe(
            Effect.catchCause((cause) => Effect.logWarning("task event relay failed; retrying", cause)),
            Effect.repeat(Schedule.spaced(options.pollMillis)),
            Effect.forkScoped
          )
        })
      ).pipe(
        Layer.provide(EventRelay.layer()),
        Layer.provide(HubEventPublisherHttp({ hubUrl: options.hubUrl, signingKey: options.signingKey }))
      )
