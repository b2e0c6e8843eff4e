import { useEffect, useRef, useState } from "preact/hooks"
import { ApiError } from "../shared/api.ts"
import { Loading } from "../shared/components.tsx"
import { navigate, useLocation } from "../shared/router.ts"
import { api, call, workspaceUrl, type Me } from "./api.ts"
import { Board, History, Inbox, Search, Sent } from "./ListPages.tsx"
import { Meetings, ProjectPage, Projects } from "./Projects.tsx"
import { Proposals } from "./Proposals.tsx"
import { SettingsPage } from "./Settings.tsx"
import { MeContext } from "./TaskList.tsx"
import { TaskPage } from "./TaskPage.tsx"
import { Problem, useMutation } from "./ui.tsx"

const segment = (text: string | undefined) => {
  try {
    return text === undefined ? undefined : decodeURIComponent(text)
  } catch {
    return undefined
  }
}

/** Signed out: one button, to the hub's sign-in, coming back to the page that was asked for. */
const SignIn = () => {
  useEffect(() => {
    document.title = "Sign in · Task inbox"
  }, [])
  const here = window.location.pathname + window.location.search
  const next = here !== "/" && here.startsWith("/") && !here.startsWith("//") ? `?next=${encodeURIComponent(here)}` : ""
  return (
    <main id="main" class="narrow" tabIndex={-1}>
      <h1>Task inbox</h1>
      <p>Triage the tasks people and agents send you, and review what your meetings suggest.</p>
      <p>
        <a class="button primary" href={`/auth/login${next}`} data-reload>
          Sign in
        </a>
      </p>
      <p class="muted small">You sign in at your workspace; you come straight back here.</p>
    </main>
  )
}

const NotFound = () => (
  <div class="stack">
    <h1>Page not found</h1>
    <p>
      <a href="/">Back to your inbox</a>
    </p>
  </div>
)

const pages = [
  { path: "/", label: "Inbox" },
  { path: "/board", label: "Board" },
  { path: "/sent", label: "Sent" },
  { path: "/search", label: "Search" },
  { path: "/history", label: "History" },
  { path: "/proposals", label: "Proposals" },
  { path: "/projects", label: "Projects" },
  { path: "/meetings", label: "Meetings" },
  { path: "/settings", label: "Settings" }
] as const

/** Signed in: the navigation, sign-out, and the page the path names. */
const Signed = ({ me, signedOut }: { readonly me: Me; readonly signedOut: () => void }) => {
  const location = useLocation()
  const main = useRef<HTMLElement>(null)
  const nav = useRef<HTMLElement>(null)
  const first = useRef(true)
  const [showSent, setShowSent] = useState(true)
  const signOut = useMutation()

  useEffect(() => {
    const controller = new AbortController()
    api.settings(controller.signal).then(
      (answer) => setShowSent(answer.settings.showSentNav),
      () => {}
    )
    return () => controller.abort()
  }, [])

  // After moving to another page, focus goes to it, so a screen reader starts reading there.
  // On a phone the navigation scrolls sideways: the current page's link is kept in view.
  useEffect(() => {
    if (first.current) first.current = false
    else main.current?.focus()
    nav.current?.querySelector("[aria-current]")?.scrollIntoView({ block: "nearest", inline: "nearest" })
  }, [location.path])

  const parts = location.path.split("/").filter((part) => part !== "")
  const [first_, second] = [parts[0], segment(parts[1])]
  let content
  let current: string | undefined
  if (parts.length === 0 || (parts.length === 1 && first_ === "inbox")) {
    content = <Inbox />
    current = "/"
  } else if (parts.length === 1 && first_ === "board") content = <Board />
  else if (parts.length === 1 && first_ === "sent") content = <Sent />
  else if (parts.length === 1 && first_ === "search") content = <Search search={location.search} />
  else if (parts.length === 1 && first_ === "history") content = <History search={location.search} />
  else if (parts.length === 1 && first_ === "proposals") content = <Proposals />
  else if (parts.length === 1 && first_ === "projects") content = <Projects />
  else if (parts.length === 1 && first_ === "meetings") content = <Meetings search={location.search} />
  else if (parts.length === 1 && first_ === "settings")
    content = <SettingsPage tab="preferences" saved={(s) => setShowSent(s.showSentNav)} />
  else if (parts.length === 2 && first_ === "settings" && second === "api-keys") {
    content = <SettingsPage tab="api-keys" saved={(s) => setShowSent(s.showSentNav)} />
    current = "/settings"
  } else if (parts.length === 2 && first_ === "tasks" && second !== undefined) content = <TaskPage taskId={second} />
  else if (parts.length === 2 && first_ === "projects" && second !== undefined) {
    content = <ProjectPage projectId={second} />
    current = "/projects"
  } else content = <NotFound />
  current ??= parts.length === 1 ? `/${first_}` : undefined

  return (
    <MeContext.Provider value={me.user.email}>
      <a class="skip-link" href="#main" data-reload>
        Skip to content
      </a>
      <header class="app-header">
        <a class="brand" href="/">
          Task inbox
        </a>
        {workspaceUrl !== undefined ? (
          <a href={workspaceUrl} class="small">
            Workspace
          </a>
        ) : null}
        <span class="muted small who">{me.user.name || me.user.email}</span>
        <button
          type="button"
          disabled={signOut.pending}
          onClick={() =>
            void signOut.start(
              () => call("POST", "/auth/logout"),
              () => {
                signedOut()
                navigate("/", { replace: true })
              }
            )
          }
        >
          Sign out
        </button>
        <nav aria-label="Task inbox" class="app-nav" ref={nav}>
          {pages
            .filter((page) => page.path !== "/sent" || showSent)
            .map((page) => (
              <a key={page.path} href={page.path} aria-current={current === page.path ? "page" : undefined}>
                {page.label}
              </a>
            ))}
        </nav>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        <Problem error={signOut.error} />
        {content}
      </main>
    </MeContext.Provider>
  )
}

/** Who is signed in (the task inbox's own session) decides: the sign-in button, or the app. */
export const App = () => {
  const [session, setSession] = useState<{ me?: Me; error?: unknown; checked: boolean }>({ checked: false })
  const [attempt, setAttempt] = useState(0)
  useEffect(() => {
    api.me().then(
      (me) => setSession({ me, checked: true }),
      (error: unknown) =>
        setSession(error instanceof ApiError && error.status === 401 ? { checked: true } : { error, checked: true })
    )
  }, [attempt])
  if (!session.checked)
    return (
      <main id="main">
        <Loading />
      </main>
    )
  if (session.error !== undefined)
    return (
      <main id="main" class="narrow">
        <h1>Task inbox</h1>
        <Problem error={session.error} retry={() => setAttempt((n) => n + 1)} />
      </main>
    )
  if (session.me === undefined) return <SignIn />
  return <Signed me={session.me} signedOut={() => setSession({ checked: true })} />
}
