import { Context, type Effect } from "effect"

/**
 * The unified notification feed: one entry per `<service>.notification.created` event, in the feed of the
 * user the event's subject names. The feed is the person's bell (docs/notifications.md).
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
  /**
   * Answers the message may offer as links (a decision's options, each its own link for this person): shown
   * in the email and the person's own chat message, never in the feed nor the organization's chat channel.
   * Gone once the notification is settled.
   */
  readonly actions?: ReadonlyArray<NotificationAction> | undefined
  readonly createdAt: string
  /** When the person read it; null while unread. Filed already read when the person turned the bell off. */
  readonly readAt: string | null
}

/** One answer a message offers: a label and its absolute http(s) link. */
export interface NotificationAction {
  readonly label: string
  readonly url: string
}

/** Where a page of the feed starts: strictly after this entry (newest first). */
export interface FeedPosition {
  readonly createdAt: string
  readonly id: string
}

export interface FeedQuery {
  readonly limit: number
  readonly after?: FeedPosition | undefined
  /** Services the person hid: their notifications are left out (and not counted). */
  readonly hiddenServices: ReadonlyArray<string>
}

/**
 * A producer's word that what its notifications leading to `url` asked for is settled (a decision answered):
 * every such notification, whoever it was filed for, is marked read (its `readAt` kept when it was read
 * already) and, when `body` is given, says that instead. `categories` narrows it to those categories; empty,
 * every notification of the service leading to `url`.
 */
export interface Settlement {
  readonly service: string
  readonly url: string
  readonly categories: ReadonlyArray<string>
  readonly body: string | null
  readonly atIso: string
}

/** Why a settled notification's pending deliveries are cancelled: there is nothing to tell any more. */
export const settledReason = "settled: what it asked for is done"

/** Whether a settlement applies to a notification. */
export const settles = (settlement: Settlement, n: Pick<Notification, "service" | "url" | "category">): boolean =>
  n.service === settlement.service &&
  n.url === settlement.url &&
  (settlement.categories.length === 0 || (n.category !== null && settlement.categories.includes(n.category)))

/** The notification as a settlement leaves it: read, saying how it ended, with no answers to offer. */
export const settled = (settlement: Settlement, n: Notification): Notification => {
  const { actions, ...rest } = n
  return actions === undefined
    ? { ...n, readAt: n.readAt ?? settlement.atIso, body: settlement.body ?? n.body }
    : { ...rest, readAt: n.readAt ?? settlement.atIso, body: settlement.body ?? n.body }
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
    /**
     * `file` for many notifications at once (one statement on SQL), each of a different event: answers those
     * filed now, in the order given; one whose event has a notification already is left out.
     */
    readonly fileAll: (notifications: ReadonlyArray<Notification>) => Effect.Effect<ReadonlyArray<Notification>>
    /** The user's feed, newest first, every service (operators). */
    readonly feed: (userId: string, limit: number) => Effect.Effect<ReadonlyArray<Notification>>
    /** One page of the person's own feed, newest first: at most `limit` entries after `after`. */
    readonly page: (userId: string, query: FeedQuery) => Effect.Effect<ReadonlyArray<Notification>>
    readonly unreadCount: (userId: string, hiddenServices: ReadonlyArray<string>) => Effect.Effect<number>
    /**
     * Marks the user's notification read (the first time only: its `readAt` stays); undefined when the user
     * has no notification with that id, whoever else does.
     */
    readonly markRead: (userId: string, id: string, atIso: string) => Effect.Effect<Notification | undefined>
    /** Marks every unread notification of the user read; answers how many. */
    readonly markAllRead: (userId: string, atIso: string) => Effect.Effect<number>
    /**
     * Applies each settlement to the notifications filed so far, every user's, and cancels their deliveries
     * still pending (`settledReason`): nobody is emailed or pushed about what is done. Answers how many
     * notifications it changed.
     */
    readonly settle: (settlements: ReadonlyArray<Settlement>) => Effect.Effect<number>
  }
>()("core/hub/NotificationStore") {}
