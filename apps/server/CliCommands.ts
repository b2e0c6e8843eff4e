import { Effect } from "effect"
import { parseArgs } from "node:util"

/**
 * The CLI's commands, kept apart from the entry point (cli.ts) so the argument handling and the calls to the
 * hub's operator API can be tested. Every command but a local `token` is one call of `/api/v1/admin/*`.
 */

export const usage = `Usage: npm run cli -- <command> [options] [--hub <url>]

Operator commands (the hub's operator API, with HUB_ADMIN_KEY; --hub defaults to http://127.0.0.1:<HUB_PORT>):
  org create --name <name> [--tier free|hourly|monthly]
  user create --email <email> --name <name> [--verified]
  member add --org <orgId> --email <email> --role OWNER|ADMIN|MEMBER|VIEWER
  service register --id <id> --name <displayName> --url <https base URL>
  service list
  service promote --id <id>
  install --org <orgId> --service <id> [--consents companyId,accessClaims,embed] [--permissions <key,...>]
  flag set --name access-claims|developer-platform --enabled true|false [--org <orgId>]

  token --service <id> --email <email> [--company <orgId>] [--role OWNER|ADMIN|MEMBER|VIEWER] [--local]
        Prints an identity token (AUTH-4), valid 300 s. Minted by the hub when it knows the service; with
        --role or --local, or when the hub does not know the service or cannot be reached, minted here with
        the service's embed key from the server's configuration (first-party services only).

Configuration as the server's: environment, or DATA_DIR/dev-secrets.json in development.
`

/** One call of the operator API; `print` says what of the answer's `data` goes to stdout. */
export interface ApiCall {
  readonly _tag: "ApiCall"
  readonly method: "GET" | "POST" | "PUT"
  readonly path: string
  readonly body?: Record<string, unknown>
  readonly print: "data" | "token"
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

export interface UsageError {
  readonly _tag: "UsageError"
  readonly message: string
}

export interface Parsed {
  readonly hub: string | undefined
  readonly command: ApiCall | TokenRequest | UsageError
}

const options = {
  hub: { type: "string" },
  name: { type: "string" },
  tier: { type: "string" },
  email: { type: "string" },
  verified: { type: "boolean" },
  org: { type: "string" },
  role: { type: "string" },
  id: { type: "string" },
  url: { type: "string" },
  service: { type: "string" },
  company: { type: "string" },
  local: { type: "boolean" },
  consents: { type: "string" },
  permissions: { type: "string" },
  enabled: { type: "string" }
} as const

type Values = ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>["values"]

const consentNames = ["companyId", "accessClaims", "embed"] as const

const list = (text: string | undefined) =>
  text === undefined
    ? undefined
    : text
        .split(",")
        .map((part) => part.trim())
        .filter((part) => part.length > 0)

const segment = (value: string) => encodeURIComponent(value)

/** Names the first missing option, or answers undefined when all are present. */
const missing = (values: Values, names: ReadonlyArray<keyof Values>) => {
  const name = names.find((n) => values[n] === undefined)
  return name === undefined ? undefined : { _tag: "UsageError" as const, message: `--${String(name)} is required.` }
}

const call = (
  method: ApiCall["method"],
  path: string,
  body?: Record<string, unknown>,
  print: ApiCall["print"] = "data"
): ApiCall => ({ _tag: "ApiCall", method, path, ...(body === undefined ? {} : { body }), print })

const commands: Record<string, (values: Values) => Parsed["command"]> = {
  "org create": (v) =>
    missing(v, ["name"]) ??
    call("POST", "/api/v1/admin/orgs", { name: v.name, ...(v.tier === undefined ? {} : { tier: v.tier }) }),
  "user create": (v) =>
    missing(v, ["email", "name"]) ??
    call("POST", "/api/v1/admin/users", {
      email: v.email,
      name: v.name,
      ...(v.verified === undefined ? {} : { verified: v.verified })
    }),
  "member add": (v) =>
    missing(v, ["org", "email", "role"]) ??
    call("POST", `/api/v1/admin/orgs/${segment(v.org!)}/members`, { email: v.email, role: v.role }),
  "service register": (v) =>
    missing(v, ["id", "name", "url"]) ??
    call("POST", "/api/v1/admin/services", { id: v.id, displayName: v.name, baseUrl: v.url }),
  "service list": () => call("GET", "/api/v1/admin/services"),
  "service promote": (v) => missing(v, ["id"]) ?? call("POST", `/api/v1/admin/services/${segment(v.id!)}/promote`),
  install: (v) => {
    const absent = missing(v, ["org", "service"])
    if (absent !== undefined) return absent
    const granted = list(v.consents) ?? [...consentNames]
    const unknown = granted.find((name) => !(consentNames as ReadonlyArray<string>).includes(name))
    if (unknown !== undefined) {
      return { _tag: "UsageError", message: `--consents takes ${consentNames.join(", ")}; not ${unknown}.` }
    }
    return call("PUT", `/api/v1/admin/orgs/${segment(v.org!)}/installations/${segment(v.service!)}`, {
      consents: Object.fromEntries(consentNames.map((name) => [name, granted.includes(name)])),
      permissions: list(v.permissions) ?? []
    })
  },
  "flag set": (v) => {
    const absent = missing(v, ["name", "enabled"])
    if (absent !== undefined) return absent
    if (v.enabled !== "true" && v.enabled !== "false") {
      return { _tag: "UsageError", message: "--enabled must be true or false." }
    }
    return call("PUT", `/api/v1/admin/flags/${segment(v.name!)}`, {
      enabled: v.enabled === "true",
      ...(v.org === undefined ? {} : { orgId: v.org })
    })
  },
  token: (v) =>
    missing(v, ["service", "email"]) ?? {
      _tag: "Token",
      service: v.service!,
      email: v.email!,
      company: v.company,
      role: v.role,
      local: v.local === true || v.role !== undefined
    }
}

const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]"])

/**
 * Every call sends HUB_ADMIN_KEY, so `--hub` must be a place it may go: https, or plain http only to this
 * machine (where the bundled server listens by default), and never with credentials in the URL.
 */
const checkHub = (hub: string): UsageError | undefined => {
  let url: URL
  try {
    url = new URL(hub)
  } catch {
    return { _tag: "UsageError", message: "--hub must be a URL." }
  }
  const plainLoopback = url.protocol === "http:" && loopbackHosts.has(url.hostname)
  return (url.protocol === "https:" || plainLoopback) && url.username === "" && url.password === ""
    ? undefined
    : { _tag: "UsageError", message: "--hub must be an https URL, or http on this machine, without credentials." }
}

/** The command line, as the words after `cli`. Unknown options and commands are usage errors. */
export const parseCommand = (argv: ReadonlyArray<string>): Parsed => {
  let parsed: { readonly positionals: ReadonlyArray<string>; readonly values: Values }
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true })
  } catch (error) {
    return { hub: undefined, command: { _tag: "UsageError", message: (error as Error).message } }
  }
  const { positionals, values } = parsed
  const badHub = values.hub === undefined ? undefined : checkHub(values.hub)
  if (badHub !== undefined) return { hub: undefined, command: badHub }
  const name = positionals.join(" ")
  if (name === "") return { hub: values.hub, command: { _tag: "UsageError", message: "Name a command." } }
  const command = Object.hasOwn(commands, name) ? commands[name]! : undefined
  return {
    hub: values.hub,
    command: command === undefined ? { _tag: "UsageError", message: `Unknown command "${name}".` } : command(values)
  }
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

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/** The answer as the CLI shows it: `data` (or its token) on stdout, or the envelope's message on stderr. */
export const outcomeOf = (hub: string, answer: HubAnswer, print: ApiCall["print"]): Outcome => {
  if (answer._tag === "Unreachable") return { stderr: `Could not reach the hub at ${hub}.\n`, exitCode: 1 }
  const body = answer.body
  if (answer.status < 400 && isRecord(body) && Object.hasOwn(body, "data")) {
    const data = body["data"]
    if (print === "token" && isRecord(data) && typeof data["token"] === "string") {
      return { stdout: `${data["token"]}\n`, exitCode: 0 }
    }
    return { stdout: `${JSON.stringify(data, null, 2)}\n`, exitCode: 0 }
  }
  const error = isRecord(body) && isRecord(body["error"]) ? body["error"] : undefined
  const message = typeof error?.["message"] === "string" ? error["message"] : `The hub answered ${answer.status}.`
  return { stderr: `${message}\n`, exitCode: 1 }
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
