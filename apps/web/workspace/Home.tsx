import { useState } from "preact/hooks"
import { getData, postData } from "../shared/api.ts"
import { Callout, ErrorMessage, Loading, messageOf, useLoad } from "../shared/components.tsx"
import { safeHref } from "../shared/router.ts"
import type { Me, Notification, NotificationPage, WorkspaceApp } from "./types.ts"

const when = (iso: string) => {
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString()
}

const feedPath = (cursor?: string) =>
  `/api/v1/me/notifications?limit=20${cursor !== undefined ? `&cursor=${encodeURIComponent(cursor)}` : ""}`

/** The notification feed: newest first, unread marked, each linking to its page in the workspace. */
const Feed = () => {
  const first = useLoad("feed", (signal) => getData<NotificationPage>(feedPath(), signal))
  const [more, setMore] = useState<{ items: ReadonlyArray<Notification>; nextCursor: string | null } | undefined>()
  const [read, setRead] = useState<Record<string, string>>({})
  const [allRead, setAllRead] = useState(false)
  const [error, setError] = useState<unknown>(undefined)

  if (first.data === undefined) return first.error !== undefined ? <ErrorMessage error={first.error} /> : <Loading />
  const items = [...first.data.items, ...(more?.items ?? [])]
  const nextCursor = more !== undefined ? more.nextCursor : first.data.nextCursor
  const isUnread = (item: Notification) => item.readAt === null && read[item.id] === undefined && !allRead
  // What this page marked read (each id only once, from unread) comes off the server's count.
  const unreadCount = allRead ? 0 : Math.max(0, first.data.unreadCount - Object.keys(read).length)

  const markRead = (item: Notification) => {
    if (!isUnread(item)) return
    setRead((previous) => ({ ...previous, [item.id]: new Date().toISOString() }))
    postData(`/api/v1/me/notifications/${encodeURIComponent(item.id)}/read`).catch((failure: unknown) => {
      setRead(({ [item.id]: _, ...rest }) => rest)
      setError(failure)
    })
  }

  return (
    <section aria-labelledby="feed-title" class="stack">
      <div class="actions">
        <h2 id="feed-title">
          Notifications{" "}
          <span class="badge" aria-label={`${unreadCount} unread`}>
            {unreadCount} unread
          </span>
        </h2>
        {unreadCount > 0 ? (
          <button
            type="button"
            onClick={() => {
              setAllRead(true)
              postData("/api/v1/me/notifications/read-all").catch((failure: unknown) => {
                setAllRead(false)
                setError(failure)
              })
            }}
          >
            Mark all as read
          </button>
        ) : null}
      </div>
      {error !== undefined ? <Callout tone="danger">{messageOf(error)}</Callout> : null}
      {items.length === 0 ? (
        <p class="muted">No notifications yet.</p>
      ) : (
        <ul class="item-list" aria-label="Notifications">
          {items.map((item) => {
            const href = safeHref(item.url)
            const unread = isUnread(item)
            return (
              <li key={item.id} class={unread ? "unread" : undefined}>
                <span class="item-text">
                  <span class="item-title">
                    {unread ? <span class="visually-hidden">Unread: </span> : null}
                    {href !== undefined ? (
                      <a href={href} onClick={() => markRead(item)}>
                        {item.title}
                      </a>
                    ) : (
                      item.title
                    )}
                  </span>
                  {item.body !== null && item.body !== "" ? <span class="item-subtitle">{item.body}</span> : null}
                  <span class="item-subtitle">
                    {item.service} · <time dateTime={item.createdAt}>{when(item.createdAt)}</time>
                  </span>
                </span>
                {unread ? (
                  <button type="button" onClick={() => markRead(item)} aria-label={`Mark as read: ${item.title}`}>
                    Mark as read
                  </button>
                ) : null}
              </li>
            )
          })}
        </ul>
      )}
      {nextCursor !== null ? (
        <button
          type="button"
          onClick={() =>
            getData<NotificationPage>(feedPath(nextCursor)).then(
              (page) => setMore({ items: [...(more?.items ?? []), ...page.items], nextCursor: page.nextCursor }),
              setError
            )
          }
        >
          Show older notifications
        </button>
      ) : null}
    </section>
  )
}

/** Opens an app that the workspace shows through its own address (an embed URL with a one-time token). */
export const openEmbed = async (app: WorkspaceApp) => {
  const { url } = await getData<{ url: string }>(`/api/v1/workspace/apps/${encodeURIComponent(app.id)}/embed`)
  const target = safeHref(url)
  if (target === undefined) throw new Error("The app's address is not a web address.")
  window.location.assign(target)
}

/**
 * Where an app's entry leads: its pages (or its embed) in the workspace, else its own web app, where the person
 * signs in through the hub.
 */
export const appHref = (app: WorkspaceApp): string => {
  const inside = `/apps/${encodeURIComponent(app.id)}`
  if (app.pages || app.embedUrl !== null) return inside
  return safeHref(app.appUrl) ?? inside
}

const AppCard = ({ app }: { readonly app: WorkspaceApp }) => {
  const [error, setError] = useState<unknown>(undefined)
  const own = safeHref(app.appUrl)
  const href = appHref(app)
  return (
    <li class="card">
      <h3>{app.pages || href === own ? <a href={href}>{app.name}</a> : app.name}</h3>
      {own !== undefined && href !== own ? <a href={own}>Open the {app.name} app</a> : null}
      {app.embedUrl !== null ? (
        <button type="button" onClick={() => openEmbed(app).catch(setError)}>
          Open {app.name}
        </button>
      ) : null}
      {error !== undefined ? <Callout tone="danger">{messageOf(error)}</Callout> : null}
    </li>
  )
}

export const Apps = ({ apps }: { readonly apps: ReadonlyArray<WorkspaceApp> | undefined }) => (
  <section aria-labelledby="apps-title">
    <h2 id="apps-title">Your apps</h2>
    {apps === undefined ? (
      <Loading />
    ) : apps.length === 0 ? (
      <p class="muted">Your organisation has not installed any app yet.</p>
    ) : (
      <ul class="cards">
        {apps.map((app) => (
          <AppCard key={app.id} app={app} />
        ))}
      </ul>
    )}
  </section>
)

export const Home = ({ me, apps }: { readonly me: Me; readonly apps: ReadonlyArray<WorkspaceApp> | undefined }) => (
  <div class="stack">
    <h1>Welcome{me.user.name !== null && me.user.name !== "" ? `, ${me.user.name}` : ""}</h1>
    <Feed />
    <Apps apps={apps} />
  </div>
)
