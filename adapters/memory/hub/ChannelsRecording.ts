import { Clock, Context, Effect, Layer } from "effect"
import {
  BellChannel,
  ChannelRecordings,
  ChatChannel,
  EmailChannel,
  PushChannel,
  type ChannelRecord
} from "../../../core/hub/Channels.ts"
import type { ChannelName } from "../../../core/hub/Directory.ts"
import type { Notification } from "../../../core/hub/NotificationStore.ts"
import { isoAt } from "../../../core/kernel/Timestamp.ts"

/** Kept per process; the newest are kept when it grows past this, so a long-running server stays bounded. */
const maxRecords = 10_000

/**
 * The notification channels of this issue: each records what it would send, in memory, readable by tests
 * and by operators (ChannelRecordings). One layer provides all four channel ports and the reader.
 */
export const ChannelsRecording = Layer.effectContext(
  Effect.sync(() => {
    const records: Array<ChannelRecord> = []
    const record = (channel: ChannelName, email: string, items: ReadonlyArray<Notification>) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        records.push({
          channel,
          email,
          notificationIds: items.map((item) => item.id),
          title: items.length === 1 ? items[0]!.title : `${items.length} new notifications`,
          at: isoAt(now)
        })
        if (records.length > maxRecords) records.splice(0, records.length - maxRecords)
      })
    const single = (channel: ChannelName) => ({
      send: (notification: Notification) => record(channel, notification.email, [notification])
    })
    return Context.mergeAll(
      BellChannel.context(single("bell")),
      ChatChannel.context(single("chat")),
      PushChannel.context(single("push")),
      EmailChannel.context({ send: (batch) => record("email", batch.email, batch.items) }),
      ChannelRecordings.context({
        forUser: (email) => Effect.sync(() => records.filter((r) => r.email === email).map((r) => ({ ...r })))
      })
    )
  })
)
