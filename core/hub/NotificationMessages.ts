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

/**
 * One email for one or several notifications (a digest), oldest first; every value escaped in the HTML part.
 * A notification's answers (`actions`) follow it, one link each: each opens a page that asks before it answers.
 */
export const emailMessage = (publicUrl: string, to: string, items: ReadonlyArray<Notification>): MailMessage => {
  const subject = items.length === 1 ? items[0]!.title : `${items.length} new notifications`
  const entries = items.map((n) => ({
    title: n.title,
    body: n.body,
    link: absoluteLink(publicUrl, n.url),
    actions: n.actions ?? []
  }))
  const workspace = absoluteLink(publicUrl, null)
  const text = [
    ...entries.map((e) =>
      [
        e.title,
        ...(e.body === null ? [] : [e.body]),
        e.link,
        ...(e.actions.length === 0 ? [] : ["Answer from here:", ...e.actions.map((a) => `${a.label}: ${a.url}`)])
      ].join("\n")
    ),
    `All your notifications: ${workspace}`
  ].join("\n\n")
  const html = [
    "<!doctype html><html><body>",
    ...entries.map(
      (e) =>
        `<p><a href="${escapeHtml(e.link)}"><strong>${escapeHtml(e.title)}</strong></a>` +
        (e.body === null ? "" : `<br>${escapeHtml(e.body).replace(/\r?\n/g, "<br>")}`) +
        "</p>" +
        (e.actions.length === 0
          ? ""
          : `<p>Answer from here: ${e.actions
              .map((a) => `<a href="${escapeHtml(a.url)}">${escapeHtml(a.label)}</a>`)
              .join(" · ")}</p>`)
    ),
    `<p><a href="${escapeHtml(workspace)}">All your notifications</a></p>`,
    "</body></html>"
  ].join("\n")
  return { to, subject, text, html }
}

/** Slack's own escaping of message text: `&`, `<` and `>` only, so no text can form a link or a mention. */
const escapeChat = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

const chatLink = (url: string, label: string) => `<${url.replace(/[<>|]/g, encodeURIComponent)}|${escapeChat(label)}>`

/** A chat message: the title, the body, and the link (in Slack's `<url|label>` form). */
export const chatText = (publicUrl: string, n: Notification): string =>
  [
    `*${escapeChat(n.title)}*`,
    ...(n.body === null ? [] : [escapeChat(n.body)]),
    chatLink(absoluteLink(publicUrl, n.url), "Open")
  ].join("\n")

/** A chat message as posted: its text, and Slack-compatible blocks when it has buttons to show. */
export interface ChatMessage {
  readonly text: string
  readonly blocks?: ReadonlyArray<unknown> | undefined
}

// A button's label is at most 75 characters in Slack's blocks.
const buttonLabel = (label: string) => (label.length <= 75 ? label : `${label.slice(0, 74)}…`)

/**
 * The chat message for the person's own webhook. With answers (`actions`), the text ends with a plain link
 * for each (what a receiver without blocks shows), and the blocks show the same message with a url button
 * for each (what Slack and compatible receivers show). The organization's channel gets `chatText` alone: an
 * answer link is for one person.
 */
export const chatMessage = (publicUrl: string, n: Notification): ChatMessage => {
  const actions = n.actions ?? []
  const text = chatText(publicUrl, n)
  if (actions.length === 0) return { text }
  return {
    text: [text, actions.map((a) => chatLink(a.url, a.label)).join(" · ")].join("\n"),
    blocks: [
      { type: "section", text: { type: "mrkdwn", text } },
      {
        type: "actions",
        elements: actions.map((a, i) => ({
          type: "button",
          action_id: `answer-${i}`,
          text: { type: "plain_text", text: buttonLabel(a.label) },
          url: a.url
        }))
      }
    ]
  }
}

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
