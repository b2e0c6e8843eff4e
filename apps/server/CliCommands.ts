import { Effect, Option, Schema } from "effect"
import { FieldIssues } from "../../core/kernel/FieldIssue.ts"

/**
 * The CLI's calls of the hub's operator API and how their answers are shown, kept apart from the command
 * definitions (CliProgram.ts) so they can be tested alone.
 */

/**
 * One call of the operator API; `print` says what of the answer's `data` goes to stdout: all of it, its token,
 * or one of its fields (`{ field: "members" }`).
 */
export interface ApiCall {
  readonly _tag: "ApiCall"
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  readonly path: string
  readonly body?: Record<string, unknown>
  readonly print: "data" | "token" | { readonly field: string }
}

export interface TokenRequest {
  readonly _tag: "Token"
  readonly service: string
  readonly email: string
  readonly company: string | undefined
  readonly role: string | undefined
  /** Mint here, without asking the hub (a chosen role is only possible here). */
  readonly local: boolean
}

const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]"])

/**
 * Every call sends HUB_ADMIN_KEY, so `--hub` must be a place it may go: https, or plain http only to this
 * machine (where the bundled server listens by default), and never with credentials in the URL.
 */
export const checkHub = (hub: string): string | undefined => {
  let url: URL
  try {
    url = new URL(hub)
  } catch {
    return "--hub must be a URL."
  }
  const plainLoopback = url.protocol === "http:" && loopbackHosts.has(url.hostname)
  return (url.protocol === "https:" || plainLoopback) && url.username === "" && url.password === ""
    ? undefined
    : "--hub must be an https URL, or http on this machine, without credentials."
}

/** What the CLI prints and how it exits. */
export interface Outcome {
  readonly stdout?: string
  readonly stderr?: string
  readonly exitCode: number
}

export type HubAnswer =
  { readonly _tag: "Answered"; readonly status: number; readonly body: unknown } | { readonly _tag: "Unreachable" }

/** One request to the operator API; a hub that cannot be reached is an answer too (the CLI says so). */
export const callHub = (
  hub: string,
  adminKey: string,
  call: Pick<ApiCall, "method" | "path" | "body">
): Effect.Effect<HubAnswer> =>
  Effect.promise(async (): Promise<HubAnswer> => {
    try {
      const response = await fetch(`${hub.replace(/\/+$/, "")}${call.path}`, {
        method: call.method,
        headers: {
          authorization: `Bearer ${adminKey}`,
          ...(call.body === undefined ? {} : { "content-type": "application/json" })
        },
        ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) })
      })
      const text = await response.text()
      let body: unknown = undefined
      try {
        body = JSON.parse(text)
      } catch {
        body = undefined
      }
      return { _tag: "Answered", status: response.status, body }
    } catch {
      return { _tag: "Unreachable" }
    }
  })

const segment = (value: string) => encodeURIComponent(value)

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

const fieldIssues = Schema.decodeUnknownOption(FieldIssues)

/**
 * A validation answer's bad fields, one line each (`  name: must not be empty`, a field outside the body
 * with its place: `  header Idempotency-Key: is required`); empty when the answer names none but the whole
 * request with the answer's own message.
 */
const fieldErrors = (details: unknown, message: string): string =>
  Option.match(fieldIssues(details), {
    onNone: () => "",
    onSome: (issues) =>
      issues
        .filter((issue) => issue.field !== "" || issue.message !== message)
        .map((issue) => {
          const field = issue.in === "body" ? issue.field : `${issue.in} ${issue.field}`.trim()
          return `  ${[field, issue.message].filter((part) => part.length > 0).join(": ")}\n`
        })
        .join("")
  })

/** The answer as the CLI shows it: `data` (or its token) on stdout, or the envelope's message on stderr. */
export const outcomeOf = (hub: string, answer: HubAnswer, print: ApiCall["print"]): Outcome => {
  if (answer._tag === "Unreachable") return { stderr: `Could not reach the hub at ${hub}.\n`, exitCode: 1 }
  const body = answer.body
  if (answer.status < 400 && isRecord(body) && Object.hasOwn(body, "data")) {
    const data = body["data"]
    if (print === "token" && isRecord(data) && typeof data["token"] === "string") {
      return { stdout: `${data["token"]}\n`, exitCode: 0 }
    }
    if (typeof print === "object" && isRecord(data) && Object.hasOwn(data, print.field)) {
      return { stdout: `${JSON.stringify(data[print.field], null, 2)}\n`, exitCode: 0 }
    }
    return { stdout: `${JSON.stringify(data, null, 2)}\n`, exitCode: 0 }
  }
  const error = isRecord(body) && isRecord(body["error"]) ? body["error"] : undefined
  const message = typeof error?.["message"] === "string" ? error["message"] : `The hub answered ${answer.status}.`
  return { stderr: `${message}\n${fieldErrors(error?.["details"], message)}`, exitCode: 1 }
}

/**
 * `token` through the hub: when the hub knows the service it mints the token (membership-checked); when it
 * does not know the service, or cannot be reached, `undefined` lets the caller mint locally.
 */
export const tokenFromHub = (hub: string, adminKey: string, request: TokenRequest) =>
  Effect.gen(function* () {
    const known = yield* callHub(hub, adminKey, {
      method: "GET",
      path: `/api/v1/admin/services/${segment(request.service)}`
    })
    if (known._tag === "Unreachable" || known.status === 404) return undefined
    if (known.status >= 400) return outcomeOf(hub, known, "data")
    const body = {
      service: request.service,
      email: request.email,
      ...(request.company === undefined ? {} : { companyId: request.company })
    }
    const minted = yield* callHub(hub, adminKey, { method: "POST", path: "/api/v1/admin/tokens", body })
    return outcomeOf(hub, minted, "token")
  })
