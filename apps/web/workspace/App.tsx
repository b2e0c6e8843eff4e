import { useEffect, useRef, useState } from "preact/hooks"
import { ApiError, getData, request } from "../shared/api.ts"
import { ErrorMessage, Loading, useLoad } from "../shared/components.tsx"
import { navigate, useLocation } from "../shared/router.ts"
import { AppHome, AppPage } from "./AppPage.tsx"
import { appHref, Home } from "./Home.tsx"
import { Settings } from "./Settings.tsx"
import { SignIn } from "./SignIn.tsx"
import type { Me, WorkspaceApp } from "./types.ts"

const segment = (text: string | undefined) => {
  try {
    return text === undefined ? undefined : decodeURIComponent(text)
  } catch {
    return undefined
  }
}

const NotFound = () => (
  <div class="stack">
    <h1>Page not found</h1>
    <p>
      <a href="/">Back to your workspace</a>
    </p>
  </div>
)

/** Signed in: the header with the apps and sign-out, and the page the path names. */
const Workspace = ({ me, signedOut }: { readonly me: Me; readonly signedOut: () => void }) => {
  const location = useLocation()
  const apps = useLoad("apps", (signal) => getData<ReadonlyArray<WorkspaceApp>>("/api/v1/workspace/apps", signal))
  const main = useRef<HTMLElement>(null)
  const first = useRef(true)
  const [signOutError, setSignOutError] = useState<unknown>(undefined)

  // After moving to another page, focus goes to it, so a screen reader starts reading there.
  useEffect(() => {
    if (first.current) first.current = false
    else main.current?.focus()
    if (location.path === "/") document.title = "Workspace"
  }, [location.path])

  const parts = location.path.split("/").filter((part) => part !== "")
  const serviceId = parts[0] === "apps" ? segment(parts[1]) : undefined
  const pageId = parts[0] === "apps" ? segment(parts[2]) : undefined
  const app = apps.data?.find((candidate) => candidate.id === serviceId)

  let content
  if (parts.length === 0) content = <Home me={me} apps={apps.data} />
  else if (serviceId !== undefined && pageId !== undefined && parts.length === 3)
    content = <AppPage serviceId={serviceId} pageId={pageId} search={location.search} app={app} />
  else if (serviceId !== undefined && parts.length === 2)
    content =
      apps.data === undefined && apps.error === undefined ? (
        <Loading />
      ) : (
        <AppHome key={serviceId} serviceId={serviceId} app={app} />
      )
  else if (parts.length === 1 && parts[0] === "settings") content = <Settings apps={apps.data} />
  else content = <NotFound />

  const signOut = () =>
    request("POST", "/auth/logout").then(() => {
      signedOut()
      navigate("/", { replace: true })
    }, setSignOutError)

  return (
    <>
      <a class="skip-link" href="#main" data-reload>
        Skip to content
      </a>
      <header class="app-header">
        <a class="brand" href="/">
          Workspace
        </a>
        <nav aria-label="Apps" class="app-nav">
          <a href="/" aria-current={parts.length === 0 ? "page" : undefined}>
            Home
          </a>
          {(apps.data ?? []).map((entry) => (
            <a key={entry.id} href={appHref(entry)} aria-current={entry.id === serviceId ? "page" : undefined}>
              {entry.name}
            </a>
          ))}
        </nav>
        <a href="/settings" class="small" aria-current={parts[0] === "settings" ? "page" : undefined}>
          Settings
        </a>
        <span class="muted small">{me.user.email}</span>
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        <ErrorMessage error={signOutError} />
        {apps.error !== undefined && parts.length === 0 ? <ErrorMessage error={apps.error} /> : null}
        {content}
      </main>
    </>
  )
}

/** Who is signed in decides everything: the sign-in page, or the workspace. */
export const App = () => {
  const [session, setSession] = useState<{ me?: Me; error?: unknown; checked: boolean }>({ checked: false })
  useEffect(() => {
    getData<Me>("/api/v1/me").then(
      (me) => setSession({ me, checked: true }),
      (error: unknown) =>
        setSession(error instanceof ApiError && error.status === 401 ? { checked: true } : { error, checked: true })
    )
  }, [])
  if (!session.checked)
    return (
      <main id="main">
        <Loading />
      </main>
    )
  if (session.error !== undefined)
    return (
      <main id="main" class="narrow">
        <h1>Workspace</h1>
        <ErrorMessage error={session.error} />
      </main>
    )
  if (session.me === undefined) return <SignIn />
  return <Workspace me={session.me} signedOut={() => setSession({ checked: true })} />
}
