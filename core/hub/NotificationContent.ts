import { Predicate } from "effect"
import { clipText } from "./EventCatalog.ts"
import type { StoredEvent } from "./EventStore.ts"
import type { Notification, NotificationAction, Settlement } from "./NotificationStore.ts"

const text = (data: Record<string, unknown>, key: string, max: number): string | null => {
  const value = Object.hasOwn(data, key) ? data[key] : undefined
  return typeof value === "string" && value.length > 0 ? clipText(value, max) : null
}

/**
 * A link a feed may render: a workspace-relative path or an http(s) URL. Anything else (`javascript:`,
 * `data:`, a protocol-relative `//host`) is dropped: a catalog schema may say only "a string" or "a uri",
 * and the feed is shown to the user inside the workspace.
 */
const safeLink = (url: string | null): string | null => {
  if (url === null) return null
  if (url.startsWith("/")) return /^\/[/\\]/.test(url) ? null : url
  return URL.canParse(url) && ["http:", "https:"].includes(new URL(url).protocol) ? url : null
}

/** At most this many answers a message offers (a decision's five options and Decline fit). */
const maxActions = 8

/**
 * The answers a notification's message may offer, read from `data.actions`: `{label, url}` each, the url an
 * absolute http(s) link (at most 2048), the label at most 120 characters. Anything else is left out.
 */
export const notificationActions = (data: Record<string, unknown>): ReadonlyArray<NotificationAction> => {
  const value = Object.hasOwn(data, "actions") ? data["actions"] : undefined
  if (!Array.isArray(value)) return []
  const found: Array<NotificationAction> = []
  for (const item of value.slice(0, maxActions)) {
    if (!Predicate.isObject(item) || Array.isArray(item)) continue
    const fields = item as Record<string, unknown>
    const label = text(fields, "label", 120)
    const url = text(fields, "url", 2048)
    if (label === null || url === null || url.length === 2048 || url.startsWith("/")) continue
    const link = safeLink(url)
    if (link !== null) found.push({ label, url: link })
  }
  return found
}

/**
 * What a notification shows, read from the event's `data` (already checked against the type's schema):
 * `title`, `body`, `url`, `category` (the first-party shape, core/hub/FirstPartyCatalog.ts). The task
 * inbox's events name their target `link` and their text `reason`, so those stand in for `url` and `body`.
 * A type whose schema has no title shows its type name; a link that is not a path or http(s) is dropped.
 */
export const notificationContent = (
  type: string,
  data: unknown
): Pick<Notification, "title" | "body" | "url" | "category" | "actions"> => {
  const fields = Predicate.isObject(data) && !Array.isArray(data) ? (data as Record<string, unknown>) : {}
  const actions = notificationActions(fields)
  return {
    title: text(fields, "title", 200) ?? type,
    body: text(fields, "body", 2000) ?? text(fields, "reason", 2000),
    url: safeLink(text(fields, "url", 2048) ?? text(fields, "link", 2048)),
    category: text(fields, "category", 64),
    ...(actions.length === 0 ? {} : { actions })
  }
}

/**
 * The settlement a `<service>.notification.settled` event asks for, read from its `data` (already checked
 * against the type's schema): `url`, the workspace-relative link of the notifications it settles; `categories`,
 * those it narrows to (absent: every one); `body`, what they say from now on. Undefined when it names no
 * path: a settlement never reaches past the producer's own notifications leading to one of its pages.
 */
export const settlementOf = (event: StoredEvent, atIso: string): Settlement | undefined => {
  const fields =
    Predicate.isObject(event.data) && !Array.isArray(event.data) ? (event.data as Record<string, unknown>) : {}
  const url = safeLink(text(fields, "url", 2048))
  if (url === null || !url.startsWith("/")) return undefined
  const categories = Array.isArray(fields["categories"])
    ? fields["categories"].filter((c): c is string => typeof c === "string" && c.length > 0 && c.length <= 64)
    : []
  return { service: event.service, url, categories, body: text(fields, "body", 2000), atIso }
}
