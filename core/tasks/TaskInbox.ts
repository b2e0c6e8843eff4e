import type { OrganizationStatuses } from "../events/OrganizationStatuses.ts"
import { Layer } from "effect"
import type { ProducerOutbox } from "../events/ProducerOutbox.ts"
import type { IdGenerator } from "../kernel/Ids.ts"
import type { Transactions } from "../kernel/Transactions.ts"
import type { TaskApiKeyStore } from "./ApiKeyStore.ts"
import { TaskDirectory } from "./Directory.ts"
import type { MachineKey } from "./MachineKeys.ts"
import { Proposals } from "./Proposals.ts"
import type { RecordStore } from "./RecordStore.ts"
import type { SessionStore } from "./SessionStore.ts"
import { TaskSettings } from "./Settings.ts"
import { TaskAccess } from "./TaskAccess.ts"
import { Tasks } from "./Tasks.ts"

export interface TaskInboxConfig {
  /** Where the service is reached: task pages (`linkToTaskInterface`) and short links are under it. */
  readonly publicUrl: string
  readonly machineKeys: ReadonlyArray<MachineKey>
}

/** Every use case of the task inbox. */
export type TaskInbox = Tasks | Proposals | TaskDirectory | TaskSettings | TaskAccess

/** The ports the task inbox's use cases run over; adapters provide them (SQL, memory). */
export type TaskInboxPorts =
  RecordStore | TaskApiKeyStore | SessionStore | ProducerOutbox | OrganizationStatuses | Transactions | IdGenerator

/** The task inbox's use cases, over ports provided by the caller. */
export const TaskInboxLayer = (config: TaskInboxConfig): Layer.Layer<TaskInbox, never, TaskInboxPorts> =>
  Layer.mergeAll(
    Tasks.layer({ publicUrl: config.publicUrl }),
    Proposals.layer({ publicUrl: config.publicUrl }),
    TaskDirectory.layer({ publicUrl: config.publicUrl }),
    TaskSettings.layer,
    TaskAccess.layer({ machineKeys: config.machineKeys })
  )
