/**
 * The workspace's service worker, served by the hub at `/sw.js` (its scope is the whole workspace). It shows
 * each web push the hub sends (`{id, service, title, body, url}`) as a notification, and a click on one opens
 * the workspace at the notification's link, or focuses a workspace window already open and moves it there.
 *
 * It stands alone (no import), so the build writes it as one small file with a fixed name.
 */

interface PushPayload {
  readonly id?: unknown
  readonly service?: unknown
  readonly title?: unknown
  readonly body?: unknown
  readonly url?: unknown
}

interface ExtendableEventLike extends Event {
  waitUntil(promise: Promise<unknown>): void
}

interface PushEventLike extends ExtendableEventLike {
  readonly data: { json(): unknown } | null
}

interface NotificationClickLike extends ExtendableEventLike {
  readonly notification: Notification
}

interface WindowClientLike {
  readonly url: string
  focus(): Promise<WindowClientLike>
  navigate(url: string): Promise<WindowClientLike | null>
}

interface WorkerScope {
  readonly registration: ServiceWorkerRegistration
  readonly location: Location
  readonly clients: {
    matchAll(options: { type: "window"; includeUncontrolled: boolean }): Promise<ReadonlyArray<WindowClientLike>>
    openWindow(url: string): Promise<WindowClientLike | null>
  }
  addEventListener(type: "push", listener: (event: PushEventLike) => void): void
  addEventListener(type: "notificationclick", listener: (event: NotificationClickLike) => void): void
}

const worker = self as unknown as WorkerScope

const text = (value: unknown, fallback: string) => (typeof value === "string" && value.length > 0 ? value : fallback)

/** Only a link inside the workspace is followed: a root-relative path, or an absolute one on this origin. */
const workspaceLink = (value: unknown): string => {
  if (typeof value !== "string") return "/"
  try {
    const url = new URL(value, worker.location.origin)
    return url.origin === worker.location.origin ? `${url.pathname}${url.search}${url.hash}` : "/"
  } catch {
    return "/"
  }
}

const payloadOf = (event: PushEventLike): PushPayload => {
  try {
    const parsed = event.data?.json()
    return typeof parsed === "object" && parsed !== null ? (parsed as PushPayload) : {}
  } catch {
    return {}
  }
}

worker.addEventListener("push", (event) => {
  const payload = payloadOf(event)
  const options: NotificationOptions = {
    body: text(payload.body, ""),
    data: { url: workspaceLink(payload.url) },
    // One notification on screen per notification of the feed, even if a push arrives twice.
    ...(typeof payload.id === "string" ? { tag: payload.id } : {})
  }
  event.waitUntil(worker.registration.showNotification(text(payload.title, "New notification"), options))
})

worker.addEventListener("notificationclick", (event) => {
  event.notification.close()
  const data = event.notification.data as { url?: unknown } | null
  const target = new URL(workspaceLink(data?.url), worker.location.origin).toString()
  event.waitUntil(
    worker.clients.matchAll({ type: "window", includeUncontrolled: true }).then(async (windows) => {
      const open = windows.find((client) => new URL(client.url).origin === worker.location.origin)
      if (open === undefined) return worker.clients.openWindow(target)
      const focused = await open.focus()
      return focused.url === target ? focused : focused.navigate(target)
    })
  )
})
