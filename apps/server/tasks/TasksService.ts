import { Layer, type Redacted } from "effect"
import type { TasksWebSignIn } from "../../../adapters/http/tasks/SignIn.ts"
import type { InProcessHub, RelaySettings } from "../ProducerRelayRuntime.ts"
import { purgeIdempotency } from "../Maintenance.ts"
import type { ServiceSettings } from "../Services.ts"
import { tasksRoutes } from "./TasksRoutes.ts"
import { TasksEventRelay, TasksUseCasesWithKeys } from "./TasksRuntime.ts"

/** Everything the task inbox is configured with. */
export interface TasksServiceSettings {
  readonly routes: ServiceSettings
  /** How people sign in on the web (through the hub). */
  readonly web: TasksWebSignIn
  /** Where people reach it (`TASKS_PUBLIC_URL`) and the operator machine keys (`TASKS_MACHINE_KEYS`). */
  readonly inbox: { readonly publicUrl: string; readonly machineKeys: Redacted.Redacted<string> }
  /** The relay of its event outbox to the hub; unset, no worker runs. */
  readonly relay?: RelaySettings | undefined
}

/** What the task inbox runs over: its data and records, and how events reach the hub. */
export interface TasksServiceAdapters<Data, E, R, PE, PR> {
  /** `TasksDataMigrated(records)` on a database, or memory adapters (with units of work and idempotency). */
  readonly data: Layer.Layer<Data, E, R>
  /** Hands events to a hub in the same process; unset, the relay posts them to `relay.hubUrl`, signed. */
  readonly hubPublisher?: InProcessHub<PE, PR> | undefined
}

/**
 * The task inbox as one layer: its routes (API, sign-in, its web app) and workers (the relay of its events to
 * the hub, the idempotency purge) over its use cases, over the data given (also provided, for the tests' own
 * reads). Needs `Transactions` (the database's, or the memory data's own), `Readiness` and `RateLimits`.
 */
export const TasksService = <Data, E, R, PE = never, PR = never>(
  settings: TasksServiceSettings,
  adapters: TasksServiceAdapters<Data, E, R, PE, PR>
) => {
  const workers =
    settings.relay === undefined
      ? Layer.empty
      : Layer.merge(TasksEventRelay({ ...settings.relay, publisher: adapters.hubPublisher }), purgeIdempotency)
  return Layer.merge(tasksRoutes(settings.routes, settings.web), workers).pipe(
    Layer.provideMerge(TasksUseCasesWithKeys(settings.inbox, adapters.data))
  )
}
