import { useState } from "preact/hooks"
import { postData } from "../shared/api.ts"
import { Callout, ErrorMessage, Field } from "../shared/components.tsx"

/** Set by the hub in index.html when the organisation's identity provider is configured. */
const providerLabel = () =>
  document.querySelector<HTMLMetaElement>('meta[name="hitl-sign-in-provider"]')?.content || undefined

/** Signed out: an email sign-in link, or the organisation's provider when the hub has one. */
export const SignIn = () => {
  const [email, setEmail] = useState("")
  const [sentTo, setSentTo] = useState<string | undefined>(undefined)
  const [pending, setPending] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const provider = providerLabel()
  const failed = new URLSearchParams(window.location.search).has("error")
  // Where the sign-in lands, by either way: the root-relative `next` the hub was sent with (an app's sign-in
  // through the hub's provider), else the page opened signed out (a notification's link).
  const asked = new URLSearchParams(window.location.search).get("next")
  const here = window.location.pathname + window.location.search
  const rootRelative = (path: string | null): path is string =>
    path !== null && path.startsWith("/") && !path.startsWith("//") && !path.startsWith("/\\")
  const next = rootRelative(asked) ? asked : here !== "/" && rootRelative(here) ? here : undefined

  if (sentTo !== undefined) {
    return (
      <main id="main" class="narrow stack" tabIndex={-1}>
        <h1>Check your email</h1>
        <Callout tone="success">
          If <strong>{sentTo}</strong> may sign in here, a sign-in link is on its way to it. Open the link on this
          device to continue.
        </Callout>
        <p>
          <button type="button" class="link" onClick={() => setSentTo(undefined)}>
            Use another address
          </button>
        </p>
      </main>
    )
  }

  return (
    <main id="main" class="narrow stack" tabIndex={-1}>
      <h1>Sign in to your workspace</h1>
      {failed ? <Callout tone="warning">That sign-in did not complete. Ask for a new link below.</Callout> : null}
      <form
        class="panel"
        aria-label="Sign in by email"
        onSubmit={(event) => {
          event.preventDefault()
          setPending(true)
          setError(undefined)
          postData("/auth/email", { email: email.trim(), ...(next !== undefined ? { next } : {}) }).then(
            () => {
              setPending(false)
              setSentTo(email.trim())
            },
            (failure: unknown) => {
              setPending(false)
              setError(failure)
            }
          )
        }}
      >
        <Field
          label="Email address"
          name="email"
          type="email"
          required
          autoComplete="email"
          value={email}
          onInput={setEmail}
          hint="We will email you a link that signs you in."
        />
        <ErrorMessage error={error} />
        <button type="submit" class="primary" disabled={pending} aria-busy={pending}>
          Email me a sign-in link
        </button>
      </form>
      {provider !== undefined ? (
        <p>
          <a
            class="button"
            href={next !== undefined ? `/auth/oidc?next=${encodeURIComponent(next)}` : "/auth/oidc"}
            data-reload
          >
            {provider === "true" ? "Sign in with your organisation" : `Sign in with ${provider}`}
          </a>
        </p>
      ) : null}
    </main>
  )
}
