import { Schema, SchemaTransformation } from "effect"
import { inputSchema, type Loose } from "./InputDecoding.ts"
import { Enumerated } from "./TaskFields.ts"

/** The settings' bodies: a user's settings and their API keys (docs/tasks.md, "Validation"). */

/** The allowed channel and frequency values are ours (not shown there). */
export const NotificationChannels = ["email", "slack", "none"] as const
export const NotificationFrequencies = ["immediate", "daily", "weekly"] as const

const Channel = Enumerated(NotificationChannels)
const Frequency = Enumerated(NotificationFrequencies)

/**
 * PATCH /api/settings: only what changes. Notifications nested (`notifications: {channel}`) or with dotted
 * keys (`"notifications.channel"`), as the task inbox's clients write them; the nested one wins when both
 * are given.
 */
export const SettingsPatchBody = inputSchema(
  "SettingsPatchBody",
  Schema.Struct({
    showSentNav: Schema.optionalKey(Schema.Boolean),
    notifications: Schema.optionalKey(
      Schema.Struct({ channel: Schema.optionalKey(Channel), frequency: Schema.optionalKey(Frequency) })
    ),
    "notifications.channel": Schema.optionalKey(Channel),
    "notifications.frequency": Schema.optionalKey(Frequency)
  })
)
export type SettingsPatchBody = Loose<typeof SettingsPatchBody.Encoded>

export const apiKeyNameMaxLength = 100

/** A name for an API key (POST /api/settings/api-keys): trimmed, 1 to 100 characters. */
export const ApiKeyName = Schema.String.annotate({
  description: `Trimmed, then 1 to ${apiKeyNameMaxLength} characters`
})
  .pipe(Schema.decode(SchemaTransformation.trim()))
  .check(
    Schema.makeFilter(
      (name: string) =>
        (name.length > 0 && name.length <= apiKeyNameMaxLength) || `Required, at most ${apiKeyNameMaxLength} characters`
    )
  )

export const ApiKeyCreateBody = Schema.Struct({
  name: ApiKeyName.annotateKey({ messageMissingKey: `Required, at most ${apiKeyNameMaxLength} characters` })
}).annotate({ identifier: "ApiKeyCreateBody" })
