import type { MailMessage } from "../kernel/Mailer.ts"
import type { Notification } from "./NotificationStore.ts"

/**
 * What each channel carries, composed from the notification alone (pure). Links are absolute: a
 * workspace-relative url is joined to the workspace's public URL; a notification without one links to the
 * workspace itself.
 */
export const absoluteLink = (publicUrl: string, url: string | null): string => {
  const base = publicUrl.replace(/\/+$/, "")
  if (url === null) return `${base}/`
  return url.startsWith("/") ? `${base}${url}` : url
}

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

/** One email for one or several notifications (a digest), oldest first; every value escaped in the HTML part. */
export const emailMessage = (publicUrl: string, to: string, items: ReadonlyArray<Notification>): MailMessage => {
  const subject = items.length === 1 ? items[0]!.title : `${items.length} new notifications`
  const entries = items.map((n) => ({ title: n.title, body: n.body, link: absoluteLink(publicUrl, n.url) }))
  const workspace = absoluteLink(publicUrl, null)
  const text = [
    ...entries.map((e) => [e.title, ...(e.body === null ? [] : [e.body]), e.link].join("\n")),
    `All your notifications: ${workspace}`
  ].join("\n\n")
  const html = [
    "<!doctype html><html><body>",
    ...entries.map(
      (e) =>
        `<p><a href="${escapeHtml(e.link)}"><strong>${escapeHtml(e.title)}</strong></a>` +
        (e.body === null ? "" : `<br>${escapeHtml(e.body).replace(/\r?\n/g, "<br>")}`) +
        "</p>"
    ),
    `<p><a href="${escapeHtml(workspace)}">All your notifications</a></p>`,
    "</body></html>"
  ].join("\n")
  return { to, subject, text, html }
}

/** Slack's own escaping of message text: `&`, `<` and `>` only, so no text can form a link or a mention. */
const escapeChat = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

/** A chat message: the title, the body, and the link (in Slack's `<url|label>` form). */
export const chatText = (publicUrl: string, n: Notification): string =>
  [
    `*${escapeChat(n.title)}*`,
    ...(n.body === null ? [] : [escapeChat(n.body)]),
    `<${absoluteLink(publicUrl, n.url).replace(/[<>|]/g, encodeURIComponent)}|Open>`
  ].join("\n")

const pushPayloadMaxBytes = 3000
const byteLength = (text: string) => new TextEncoder().encode(text).length

/**
 * The push message's payload (JSON), what the workspace's service worker shows. Push services take about
 * 4 KB once encrypted, so a long body is shortened (on a character boundary) until the payload fits.
 */
export const pushPayload = (publicUrl: string, n: Notification): string => {
  const make = (body: string | null, url: string) =>
    JSON.stringify({ id: n.id, service: n.service, title: n.title, body, url })
  let url = absoluteLink(publicUrl, n.url)
  if (byteLength(make(null, url)) > pushPayloadMaxBytes) url = absoluteLink(publicUrl, null)
  const chars = Array.from(n.body ?? "")
  let keep = chars.length
  while (
    keep > 0 &&
    byteLength(make(chars.slice(0, keep).join("") + (keep < chars.length ? "…" : ""), url)) > pushPayloadMaxBytes
  ) {
    keep = Math.floor(keep * 0.8)
  }
  return make(n.body === null ? null : chars.slice(0, keep).join("") + (keep < chars.length ? "…" : ""), url)
}
