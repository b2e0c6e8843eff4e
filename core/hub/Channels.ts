import { Context, type Effect } from "effect"
import type { ChannelName } from "./Directory.ts"
import type { EmailBatch } from "./EmailQueue.ts"
import type { Notification } from "./NotificationStore.ts"

/**
 * One port per notification channel (document 1, "Events" 3: bell, batched email, chat message, web push).
 * In this issue their adapters record what they would send (adapters/memory/hub/ChannelsRecording.ts).
 * A channel failure is the channel's to log: the feed entry is the record of the notification.
 */
export class BellChannel extends Context.Service<
  BellChannel,
  { readonly send: (notification: Notification) => Effect.Effect<void> }
>()("core/hub/BellChannel") {}

export class ChatChannel extends Context.Service<
  ChatChannel,
  { readonly send: (notification: Notification) => Effect.Effect<void> }
>()("core/hub/ChatChannel") {}

export class PushChannel extends Context.Service<
  PushChannel,
  { readonly send: (notification: Notification) => Effect.Effect<void> }
>()("core/hub/PushChannel") {}

/** One email per user per batch interval, with every notification that waited. */
export class EmailChannel extends Context.Service<
  EmailChannel,
  { readonly send: (batch: EmailBatch) => Effect.Effect<void> }
>()("core/hub/EmailChannel") {}

/** What a channel sent (or, with the recording adapters, would have sent) to one user. */
export interface ChannelRecord {
  readonly channel: ChannelName
  readonly email: string
  readonly notificationIds: ReadonlyArray<string>
  readonly title: string
  readonly at: string
}

/** Reads what the channels recorded, for operators (`GET /api/v1/admin/users/{email}/notifications`). */
export class ChannelRecordings extends Context.Service<
  ChannelRecordings,
  { readonly forUser: (email: string) => Effect.Effect<ReadonlyArray<ChannelRecord>> }
>()("core/hub/ChannelRecordings") {}
