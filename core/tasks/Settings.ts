import { Context, Effect, Layer } from "effect"
import type { UpstreamError } from "../kernel/Errors.ts"
import type { InvalidFields } from "./Errors.ts"
import * as Q from "./Query.ts"
import { RecordStore, type Fields, type StoredRecord } from "./RecordStore.ts"
import { text } from "./Task.ts"
import { takeInput } from "./InputDecoding.ts"
import { SettingsPatchBody } from "./SettingsInput.ts"
import type { TaskUser } from "./TaskRecords.ts"

export interface Settings {
  readonly showSentNav: boolean
  readonly notifications: { readonly channel: string; readonly frequency: string }
}
export const defaultSettings: Settings = {
  showSentNav: true,
  notifications: { channel: "email", frequency: "immediate" }
}

/** A user's settings of the task inbox, kept in the record store; a user without any has the defaults. */
export class TaskSettings extends Context.Service<
  TaskSettings,
  {
    readonly get: (user: TaskUser) => Effect.Effect<Settings, UpstreamError>
    /** Changes what the body gives (nested or dotted keys, core/tasks/SettingsInput.ts). */
    readonly update: (user: TaskUser, body: SettingsPatchBody) => Effect.Effect<Settings, InvalidFields | UpstreamError>
  }
>()("core/tasks/TaskSettings") {
  static readonly layer: Layer.Layer<TaskSettings, never, RecordStore> = Layer.effect(
    TaskSettings,
    Effect.suspend(() => make)
  )
}

const showSettings = (record: StoredRecord | undefined): Settings => {
  if (record === undefined) return defaultSettings
  const f = record.fields
  return {
    showSentNav:
      Object.hasOwn(f, "showSentNav") && typeof f["showSentNav"] === "boolean"
        ? f["showSentNav"]
        : defaultSettings.showSentNav,
    notifications: {
      channel: text(f, "notificationChannel") || defaultSettings.notifications.channel,
      frequency: text(f, "notificationFrequency") || defaultSettings.notifications.frequency
    }
  }
}

const patchInput = takeInput(SettingsPatchBody)

const make = Effect.gen(function* () {
  const store = yield* RecordStore

  const settingsRecord = (userId: string) =>
    Effect.map(store.select("settings", Q.has("user", userId), { limit: 1 }), (found) => found[0])

  return TaskSettings.of({
    get: (user: TaskUser) => Effect.map(settingsRecord(user.id), showSettings),

    update: Effect.fn("Tasks.updateSettings")(function* (user: TaskUser, body: SettingsPatchBody) {
      const patch = yield* patchInput(body)
      const changes: Record<string, Fields[string]> = {}
      if (patch.showSentNav !== undefined) changes["showSentNav"] = patch.showSentNav
      const channel = patch.notifications?.channel ?? patch["notifications.channel"]
      if (channel !== undefined) changes["notificationChannel"] = channel
      const frequency = patch.notifications?.frequency ?? patch["notifications.frequency"]
      if (frequency !== undefined) changes["notificationFrequency"] = frequency
      const existing = yield* settingsRecord(user.id)
      const saved =
        existing === undefined
          ? yield* store.create("settings", { user: [user.id], ...changes })
          : yield* store.update("settings", existing.id, changes)
      return showSettings(saved)
    })
  })
})
