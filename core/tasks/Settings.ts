import { Context, Effect, Layer } from "effect"
import type { UpstreamError } from "../kernel/Errors.ts"
import type { InvalidFields } from "./Errors.ts"
import * as Q from "./Query.ts"
import { RecordStore, type Fields, type StoredRecord } from "./RecordStore.ts"
import { text } from "./Task.ts"
import { Checks } from "./TaskInput.ts"
import { invalid, type TaskUser } from "./TaskRecords.ts"
import { mustBeOneOf } from "./Values.ts"

/** Settings; the allowed channel and frequency values are ours (not shown there). */
export const NotificationChannels = ["email", "slack", "none"] as const
export const NotificationFrequencies = ["immediate", "daily", "weekly"] as const
export interface Settings {
  readonly showSentNav: boolean
  readonly notifications: { readonly channel: string; readonly frequency: string }
}
export const defaultSettings: Settings = {
  showSentNav: true,
  notifications: { channel: "email", frequency: "immediate" }
}

export interface SettingsPatch {
  readonly showSentNav?: boolean | undefined
  readonly notifications?: { readonly channel?: string | undefined; readonly frequency?: string | undefined }
}

/** A user's settings of the task inbox, kept in the record store; a user without any has the defaults. */
export class TaskSettings extends Context.Service<
  TaskSettings,
  {
    readonly get: (user: TaskUser) => Effect.Effect<Settings, UpstreamError>
    readonly update: (user: TaskUser, body: SettingsPatch) => Effect.Effect<Settings, InvalidFields | UpstreamError>
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

const make = Effect.gen(function* () {
  const store = yield* RecordStore

  const settingsRecord = (userId: string) =>
    Effect.map(store.select("settings", Q.has("user", userId), { limit: 1 }), (found) => found[0])

  return TaskSettings.of({
    get: (user: TaskUser) => Effect.map(settingsRecord(user.id), showSettings),

    update: Effect.fn("Tasks.updateSettings")(function* (user: TaskUser, body: SettingsPatch) {
      const c = new Checks()
      const changes: Record<string, Fields[string]> = {}
      if (body.showSentNav !== undefined) changes["showSentNav"] = body.showSentNav
      const channel = body.notifications?.channel
      if (channel !== undefined) {
        const found = NotificationChannels.find((v) => v === channel.trim().toLowerCase())
        if (found === undefined) c.fail("notifications.channel", mustBeOneOf(NotificationChannels))
        else changes["notificationChannel"] = found
      }
      const frequency = body.notifications?.frequency
      if (frequency !== undefined) {
        const found = NotificationFrequencies.find((v) => v === frequency.trim().toLowerCase())
        if (found === undefined) c.fail("notifications.frequency", mustBeOneOf(NotificationFrequencies))
        else changes["notificationFrequency"] = found
      }
      if (Object.keys(c.errors).length > 0) return yield* invalid(c.errors)
      const existing = yield* settingsRecord(user.id)
      const saved =
        existing === undefined
          ? yield* store.create("settings", { user: [user.id], ...changes })
          : yield* store.update("settings", existing.id, changes)
      return showSettings(saved)
    })
  })
})
