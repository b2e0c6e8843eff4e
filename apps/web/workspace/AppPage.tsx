import { useEffect, useState } from "preact/hooks"
import { getData } from "../shared/api.ts"
import { Callout, ErrorMessage, Loading, useLoad } from "../shared/components.tsx"
import { navigate, safeHref } from "../shared/router.ts"
import { ActionContext } from "./Actions.tsx"
import { Blocks } from "./Blocks.tsx"
import { openEmbed } from "./Home.tsx"
import type { ActionAnswer, PageDocument, PageEntry, WorkspaceApp } from "./types.ts"

const appPath = (serviceId: string) => `/api/v1/workspace/apps/${encodeURIComponent(serviceId)}`

const byOrder = (pages: ReadonlyArray<PageEntry>) =>
  [...pages].sort((a, b) => (a.order ?? Number.MAX_SAFE_INTEGER) - (b.order ?? Number.MAX_SAFE_INTEGER))

/** What an action answered, said in words: its own message when it has one. */
const resultMessage = (answer: ActionAnswer): string =>
  answer.message !== undefined && answer.message !== "" ? answer.message : "Done."

/** A credential an action issued, shown once in a read-only field that can be selected and copied. */
const IssuedSecret = ({ secret }: { readonly secret: string }) => (
  <div class="stack">
    <label for="issued-secret">New key (shown only now)</label>
    <input
      id="issued-secret"
      type="text"
      readOnly
      value={secret}
      onFocus={(event) => (event.currentTarget as HTMLInputElement).select()}
    />
  </div>
)

/** An app without pages in the workspace: a way to its own web app, or to its embed. */
const AppWithoutPages = ({ app }: { readonly app: WorkspaceApp }) => {
  const [error, setError] = useState<unknown>(undefined)
  const own = safeHref(app.appUrl)
  useEffect(() => {
    document.title = app.name
  }, [app.name])
  return (
    <div class="stack">
      <h1>{app.name}</h1>
      {app.embedUrl !== null ? (
        <button type="button" class="primary" onClick={() => openEmbed(app).catch(setError)}>
          Open {app.name}
        </button>
      ) : own !== undefined ? (
        <p>
          <a class="button primary" href={own}>
            Open {app.name}
          </a>
        </p>
      ) : (
        <p class="muted">This app has no pages.</p>
      )}
      <ErrorMessage error={error} />
    </div>
  )
}

const PagesHome = ({ serviceId, app }: { readonly serviceId: string; readonly app: WorkspaceApp | undefined }) => {
  const pages = useLoad(`pages:${serviceId}`, (signal) =>
    getData<{ pages: ReadonlyArray<PageEntry> }>(`${appPath(serviceId)}/pages`, signal)
  )
  const [error, setError] = useState<unknown>(undefined)
  const first = pages.data !== undefined ? byOrder(pages.data.pages)[0] : undefined
  useEffect(() => {
    if (first !== undefined)
      navigate(`/apps/${encodeURIComponent(serviceId)}/${encodeURIComponent(first.id)}`, { replace: true })
  }, [first?.id])
  if (pages.error !== undefined && app?.embedUrl == null) return <ErrorMessage error={pages.error} />
  if (pages.data === undefined && pages.error === undefined) return <Loading />
  return (
    <div class="stack">
      <h1>{app?.name ?? serviceId}</h1>
      {app?.embedUrl != null ? (
        <button type="button" class="primary" onClick={() => openEmbed(app).catch(setError)}>
          Open {app.name}
        </button>
      ) : (
        <p class="muted">This app has no pages.</p>
      )}
      <ErrorMessage error={error} />
    </div>
  )
}

/** `/apps/<serviceId>`: the app's first page, or a way to its embed or its own web app when it has no pages. */
export const AppHome = ({ serviceId, app }: { readonly serviceId: string; readonly app: WorkspaceApp | undefined }) =>
  app !== undefined && !app.pages ? <AppWithoutPages app={app} /> : <PagesHome serviceId={serviceId} app={app} />

/** `/apps/<serviceId>/<pageId>`: one page of an app, its blocks, and its actions. */
export const AppPage = (props: {
  readonly serviceId: string
  readonly pageId: string
  readonly search: string
  readonly app: WorkspaceApp | undefined
}) => {
  const { serviceId, pageId, search } = props
  const pages = useLoad(`pages:${serviceId}`, (signal) =>
    getData<{ pages: ReadonlyArray<PageEntry> }>(`${appPath(serviceId)}/pages`, signal)
  )
  const page = useLoad(`page:${serviceId}/${pageId}${search}`, (signal) =>
    getData<{ page: PageDocument }>(`${appPath(serviceId)}/pages/${encodeURIComponent(pageId)}${search}`, signal)
  )
  const [message, setMessage] = useState<string | undefined>(undefined)
  const [secret, setSecret] = useState<string | undefined>(undefined)
  useEffect(() => {
    setMessage(undefined)
    setSecret(undefined)
  }, [serviceId, pageId, search])
  const document_ = page.data?.page
  useEffect(() => {
    if (document_ !== undefined) document.title = `${document_.title} · ${props.app?.name ?? serviceId}`
  }, [document_?.title])

  const done = (answer: ActionAnswer) => {
    setMessage(resultMessage(answer))
    setSecret(typeof answer.secret === "string" && answer.secret !== "" ? answer.secret : undefined)
    const redirect = typeof answer.redirect === "string" ? safeHref(answer.redirect) : undefined
    if (redirect !== undefined && redirect.startsWith("/")) navigate(redirect)
    else if (answer.refresh !== false) page.reload()
  }

  return (
    <div class="stack">
      {pages.data !== undefined && pages.data.pages.length > 1 ? (
        <nav aria-label={`${props.app?.name ?? serviceId} pages`} class="app-nav">
          {byOrder(pages.data.pages).map((entry) => (
            <a
              key={entry.id}
              href={`/apps/${encodeURIComponent(serviceId)}/${encodeURIComponent(entry.id)}`}
              aria-current={entry.id === pageId ? "page" : undefined}
            >
              {entry.title}
            </a>
          ))}
        </nav>
      ) : null}
      {document_ === undefined ? (
        page.error !== undefined ? (
          <>
            <h1>{props.app?.name ?? serviceId}</h1>
            <ErrorMessage error={page.error} />
          </>
        ) : (
          <Loading />
        )
      ) : (
        <article class="stack" aria-busy={page.loading}>
          <header>
            <h1>{document_.title}</h1>
            {typeof document_.description === "string" && document_.description !== "" ? (
              <p class="muted">{document_.description}</p>
            ) : null}
          </header>
          {message !== undefined ? <Callout tone="success">{message}</Callout> : null}
          {secret !== undefined ? <IssuedSecret secret={secret} /> : null}
          {page.error !== undefined ? <ErrorMessage error={page.error} /> : null}
          <ActionContext.Provider value={{ serviceId, done }}>
            <Blocks blocks={Array.isArray(document_.blocks) ? document_.blocks : []} />
          </ActionContext.Provider>
        </article>
      )}
    </div>
  )
}
