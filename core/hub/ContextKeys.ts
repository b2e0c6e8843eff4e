import { Result } from "effect"

/**
 * The callers of the subject-context plane (The
 * `X-Workspace-Service-Id` enum). Each signs its requests (AUTH-6) with its own context key.
 */
export const ContextCallers = ["error-monitoring", "schema-analysis", "tasks", "meeting-recaps"] as const
export type ContextCaller = (typeof ContextCallers)[number]

export const isContextCaller = (value: string): value is ContextCaller =>
  (ContextCallers as ReadonlyArray<string>).includes(value)

/**
 * Every service id that may hold a context key: the subject-context callers, and the callers of the
 * service-data plane (`onboarding-portal` asks for recording grants, `crm` reads organization rosters). Each
 * route admits only its own callers among them; any other id is refused like a bad signature.
 */
export const KeyedCallers = [...ContextCallers, "onboarding-portal", "crm"] as const
export type KeyedCaller = (typeof KeyedCallers)[number]

export const isKeyedCaller = (value: string): value is KeyedCaller =>
  (KeyedCallers as ReadonlyArray<string>).includes(value)

/** A context key shorter than this is refused: an HMAC key that short is guessable. */
export const contextKeyMinLength = 16

/** The configured context keys, one per caller. Empty when `HUB_CONTEXT_KEYS` is unset: the planes answer 501. */
export interface ContextKeys {
  readonly configured: boolean
  /** The caller's key, or undefined for a caller without one (or a name that is not a caller at all). */
  readonly keyFor: (caller: string) => string | undefined
}

const fromMap = (keys: ReadonlyMap<string, string>): ContextKeys => ({
  configured: keys.size > 0,
  keyFor: (caller) => keys.get(caller)
})

export const noContextKeys: ContextKeys = fromMap(new Map())

/**
 * Parses `HUB_CONTEXT_KEYS`: `service-id:key` entries separated by commas (spaces around an entry are
 * ignored; the key is everything after the first colon). An unset or blank value means no keys. Any bad
 * entry refuses the whole value, so a typo never silently locks one caller out; the message names the
 * entry by its position (1-based) and never repeats the entry, which holds a secret.
 */
export const parseContextKeys = (text: string | undefined): Result.Result<ContextKeys, string> => {
  if (text === undefined || text.trim().length === 0) return Result.succeed(noContextKeys)
  const keys = new Map<string, string>()
  const entries = text.split(",")
  for (const [index, raw] of entries.entries()) {
    const entry = raw.trim()
    const position = index + 1
    const colon = entry.indexOf(":")
    const caller = colon < 0 ? "" : entry.slice(0, colon)
    const key = colon < 0 ? "" : entry.slice(colon + 1)
    if (!isKeyedCaller(caller)) {
      return Result.fail(
        `Context key entry ${position} must be <service-id>:<key> with a service id among ${KeyedCallers.join(", ")}.`
      )
    }
    if (key.length < contextKeyMinLength || /\s/.test(key)) {
      return Result.fail(
        `Context key entry ${position} needs a key of at least ${contextKeyMinLength} characters without spaces.`
      )
    }
    if (keys.has(caller)) return Result.fail(`Context key entry ${position} names a service id given before.`)
    keys.set(caller, key)
  }
  return Result.succeed(fromMap(keys))
}
