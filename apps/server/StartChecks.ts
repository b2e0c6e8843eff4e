import { Cause, Effect, Option, Redacted } from "effect"
import { createServer } from "node:net"
import type { ServerConfig } from "./Config.ts"
import { serviceNames, type ServiceName } from "./Services.ts"

/**
 * What a start that cannot go on tells the operator: one sentence naming the setting to change or the command
 * to run, never a stack trace. Checked before any service listens, so a failed start leaves nothing half up.
 */

interface Listener {
  readonly setting: string
  readonly port: number
}

/** The services of SERVICES that this process runs (known names only: `checkServices` refuses the others). */
export const runningServices = (config: { readonly services: ReadonlyArray<string> }): ReadonlySet<ServiceName> =>
  new Set(serviceNames.filter((name) => config.services.includes(name)))

/** The setting that says where each service is reached when this process does not run it. */
const peerSettings = { hub: "HUB_URL", decisions: "DECISIONS_URL", tasks: "TASKS_URL" } as const

/** Which peers each service calls: the hub calls both services; they send their events to the hub. */
const peersOf: Record<ServiceName, ReadonlyArray<ServiceName>> = {
  hub: ["decisions", "tasks"],
  decisions: ["hub"],
  tasks: ["hub"]
}

/**
 * SERVICES: every name known, at least one, all three on the embedded database (one process holds it), and
 * every peer a running service calls either running here or reached at its URL. The first problem as a
 * sentence naming the setting, or undefined.
 */
export const checkServices = (
  config: { readonly services: ReadonlyArray<string> } & Pick<
    ServerConfig,
    "databaseUrl" | "hubUrl" | "decisionsUrl" | "tasksUrl"
  >
): string | undefined => {
  const known: ReadonlyArray<string> = serviceNames
  const unknown = config.services.find((name) => !known.includes(name))
  if (unknown !== undefined) {
    return `SERVICES names "${unknown}", which is not a service: name hub, decisions or tasks, comma-separated.`
  }
  const running = runningServices(config)
  if (running.size === 0) return "SERVICES names no service: name hub, decisions or tasks, comma-separated."
  const list = [...running].join(",")
  if (running.size < serviceNames.length && Option.isNone(config.databaseUrl)) {
    return `The embedded database serves all three services in one process: to run SERVICES=${list} alone, set DATABASE_URL to a Postgres server every instance shares.`
  }
  const urls = { hub: config.hubUrl, decisions: config.decisionsUrl, tasks: config.tasksUrl }
  for (const service of running) {
    for (const peer of peersOf[service]) {
      if (!running.has(peer) && Option.isNone(urls[peer])) {
        return `SERVICES=${list} runs ${service} without ${peer}: set ${peerSettings[peer]} to where ${peer} is reached.`
      }
    }
  }
  return undefined
}

const listenersOf = (config: ServerConfig): ReadonlyArray<Listener> => [
  ...[
    { service: "hub" as const, setting: "HUB_PORT", port: config.hubPort },
    { service: "decisions" as const, setting: "DECISIONS_PORT", port: config.decisionsPort },
    { service: "tasks" as const, setting: "TASKS_PORT", port: config.tasksPort }
  ].filter((listener) => runningServices(config).has(listener.service)),
  ...Option.match(config.metricsPort, { onNone: () => [], onSome: (port) => [{ setting: "METRICS_PORT", port }] })
]

/** The error code of opening `port` on `host` and closing it again, or undefined when it can be opened. */
const tryListen = (host: string, port: number) =>
  Effect.callback<string | undefined>((resume) => {
    const server = createServer()
    server.once("error", (error: NodeJS.ErrnoException) => resume(Effect.succeed(error.code ?? "EUNKNOWN")))
    server.listen({ port, host, exclusive: true }, () => server.close(() => resume(Effect.succeed(undefined))))
  })

const refusal = (host: string, listener: Listener, code: string) =>
  code === "EADDRINUSE"
    ? `Port ${listener.port} on ${host} is already in use: stop what listens there, or set ${listener.setting} to a free port.`
    : code === "EACCES"
      ? `Port ${listener.port} on ${host} needs privileges this account lacks: set ${listener.setting} to a port above 1023.`
      : code === "EADDRNOTAVAIL" || code === "ENOTFOUND" || code === "EAI_AGAIN"
        ? `${host} is not an address of this machine: set HOST to one of its addresses (127.0.0.1 by default).`
        : `Port ${listener.port} on ${host} cannot be opened (${code}): set ${listener.setting} to another port.`

/**
 * Every configured port, opened and closed once on HOST: the first that cannot be, as a sentence naming its
 * setting; or two settings naming one port. Undefined when all are free. (Something could still take a port
 * between this check and the listener: that start fails with the same sentence, from `startFailure`.)
 */
export const checkPorts = (config: ServerConfig): Effect.Effect<string | undefined> =>
  Effect.gen(function* () {
    const listeners = listenersOf(config)
    for (const [index, listener] of listeners.entries()) {
      const twin = listeners.slice(0, index).find((other) => other.port === listener.port)
      if (twin !== undefined) {
        return `${twin.setting} and ${listener.setting} are both ${listener.port}: give each its own port.`
      }
    }
    for (const listener of listeners) {
      const code = yield* tryListen(config.host, listener.port)
      if (code !== undefined) return refusal(config.host, listener, code)
    }
    return undefined
  })

/** Every value in the chain of causes of a failure: the error, its `cause`, its `reason`, and so on. */
const chainOf = (error: unknown): ReadonlyArray<Record<string, unknown>> => {
  const chain: Array<Record<string, unknown>> = []
  let next: unknown = error
  while (typeof next === "object" && next !== null && chain.length < 10 && !chain.includes(next as never)) {
    const item = next as Record<string, unknown>
    chain.push(item)
    next = item["reason"] !== undefined && typeof item["reason"] === "object" ? item["reason"] : item["cause"]
  }
  return chain
}

/** The database of a Postgres URL and where its server is, never its password. */
const postgresTarget = (url: string) => {
  try {
    const parsed = new URL(url)
    const database = decodeURIComponent(parsed.pathname.replace(/^\//, "")) || decodeURIComponent(parsed.username)
    return { database, server: `${parsed.hostname}:${parsed.port || "5432"}` }
  } catch {
    return { database: "", server: "" }
  }
}

/**
 * The sentence for a start that failed on something the operator can fix (a port taken meanwhile, the
 * Postgres database missing or unreachable, its credentials refused), or undefined for anything else.
 */
export const startFailure = (config: ServerConfig, cause: Cause.Cause<unknown>): string | undefined => {
  const errors = cause.reasons.flatMap((reason) =>
    Cause.isFailReason(reason) ? [reason.error] : Cause.isDieReason(reason) ? [reason.defect] : []
  )
  for (const error of errors) {
    for (const item of chainOf(error)) {
      const code = item["code"]
      if (code === "EADDRINUSE" || code === "EACCES") {
        const port = typeof item["port"] === "number" ? item["port"] : undefined
        const listener = listenersOf(config).find((candidate) => candidate.port === port)
        if (listener !== undefined) return refusal(config.host, listener, code)
      }
      if (Option.isNone(config.databaseUrl)) continue
      const { database, server } = postgresTarget(Redacted.value(config.databaseUrl.value))
      if (code === "3D000") {
        return `The database ${database} does not exist on the Postgres server of DATABASE_URL: create it (createdb ${database}, or CREATE DATABASE ${database};) and start again.`
      }
      if (code === "28P01" || code === "28000") {
        return `The Postgres server of DATABASE_URL (${server}) refused its user name or password: fix them in DATABASE_URL.`
      }
      if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "ETIMEDOUT") {
        return `No Postgres server answers at ${server} (DATABASE_URL): start it, or fix DATABASE_URL.`
      }
    }
  }
  return undefined
}
