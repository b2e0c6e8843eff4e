import { Context, type Effect } from "effect"

/**
 * The unified notification feed (document 1, "Events" 3): one entry per `<service>.notification.created`
 * event, in the feed of the user the event's subject names.
 */
export interface Notification {
  /** The hub's own id (a ULID), so the feed sorts by filing time. */
  readonly id: string
  readonly userId: string
  readonly email: string
  /** The producer and the event id: a notification is filed once per event. */
  readonly service: string
  readonly eventId: string
  readonly type: string
  readonly title: string
  readonly body: string | null
  /** Where the notification leads: a workspace-relative path or the producer's link. */
  readonly url: string | null
  readonly category: string | null
  readonly createdAt: string
}

/** The feed port. Infrastructure failures are defects. */
export class NotificationStore extends Context.Service<
  NotificationStore,
  {
    /**
     * Files the notification unless one exists for (service, eventId); answers the stored one either way,
     * so a processor that crashed after filing fans out the same notification rather than a second one.
     */
    readonly file: (
      notification: Notification
    ) => Effect.Effect<{ readonly notification: Notification; readonly filed: boolean }>
    /** The user's feed, newest first. */
    readonly feed: (userId: string, limit: number) => Effect.Effect<ReadonlyArray<Notification>>
  }
>()("core/hub/NotificationStore") {}
