import { useRef, useState } from "preact/hooks"
import { ApiError, newIdempotencyKey } from "../shared/api.ts"
import { Callout, messageOf } from "../shared/components.tsx"
import { fieldMessages } from "./api.ts"

/** What the API said, in its words (and each field's message); a lapsed session offers to sign in again. */
export const Problem = ({ error, retry }: { readonly error: unknown; readonly retry?: (() => void) | undefined }) => {
  if (error === undefined || error === null) return null
  const fields = fieldMessages(error)
  const signedOut = error instanceof ApiError && error.status === 401
  const here = window.location.pathname + window.location.search
  return (
    <Callout tone="danger">
      <p class="problem-text">{messageOf(error)}</p>
      {fields.length > 0 ? (
        <ul class="problem-fields">
          {fields.map(([field, message]) => (
            <li key={field}>
              <strong>{field}</strong>: {message}
            </li>
          ))}
        </ul>
      ) : null}
      {signedOut ? (
        <p>
          <a class="button" href={`/auth/login?next=${encodeURIComponent(here)}`} data-reload>
            Sign in again
          </a>
        </p>
      ) : null}
      {retry !== undefined && !signedOut ? (
        <p>
          <button type="button" onClick={retry}>
            Try again
          </button>
        </p>
      ) : null}
    </Callout>
  )
}

interface Attempt<T> {
  readonly key: string
  readonly run: (key: string) => Promise<T>
  readonly done: (answer: T) => void
}

/**
 * One change the person makes. Each `start` is a new action with a fresh Idempotency-Key; `retry` after a
 * failure sends that same action again with the same key, so a change that did reach the server is applied once.
 */
export const useMutation = () => {
  const last = useRef<Attempt<any> | undefined>(undefined)
  const [pending, setPending] = useState(false)
  const [error, setError] = useState<unknown>(undefined)

  const send = async <T,>(attempt: Attempt<T>): Promise<boolean> => {
    last.current = attempt
    setPending(true)
    setError(undefined)
    try {
      const answer = await attempt.run(attempt.key)
      last.current = undefined
      setPending(false)
      attempt.done(answer)
      return true
    } catch (failure) {
      setPending(false)
      setError(failure)
      return false
    }
  }

  return {
    pending,
    error,
    start: <T,>(run: (key: string) => Promise<T>, done: (answer: T) => void = () => {}) =>
      send({ key: newIdempotencyKey(), run, done }),
    /** Offered while a failed action can be sent again as it was. */
    retry: error !== undefined && last.current !== undefined ? () => void send(last.current!) : undefined,
    reset: () => {
      last.current = undefined
      setError(undefined)
    }
  }
}

export const formatDate = (value: string | null | undefined): string => {
  if (value === null || value === undefined || value === "") return "—"
  const date = new Date(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00` : value)
  if (Number.isNaN(date.getTime())) return value
  return /^\d{4}-\d{2}-\d{2}$/.test(value)
    ? date.toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" })
    : date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" })
}

/** "P1: Top Priority" reads as "P1" in tight places. */
export const shortPriority = (priority: string) => priority.split(":")[0] ?? priority

export const priorityTone = (priority: string) => `priority-${shortPriority(priority).toLowerCase()}`
