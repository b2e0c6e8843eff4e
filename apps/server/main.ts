import { NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Exit, Layer, Logger, Option, References, Runtime } from "effect"
import { join } from "node:path"
import { presentSecrets, ServerConfig } from "./Config.ts"
import { resolveOidcSigningKey, resolveSecrets } from "./DevSecrets.ts"
import { makeServer } from "./Server.ts"
import { publicUrls } from "./Addresses.ts"
import { DataDirInUse } from "../../adapters/sql/DataDir.ts"
import { checkPorts, checkServices, runningServices, startFailure } from "./StartChecks.ts"
import { jsonLinesToStdout } from "./LogLines.ts"

const serve = (config: ServerConfig, print: (text: string) => void) =>
  Effect.gen(function* () {
    const production = config.environment === "production"
    // SERVICES first: an unknown name, or a peer nobody says where to reach, ends the start naming the setting.
    const servicesRefused = checkServices(config)
    if (servicesRefused !== undefined) return yield* refuseStart(servicesRefused)
    // Before anything is written or opened: a port that is taken ends the start here, with its setting named.
    const portRefused = yield* checkPorts(config)
    if (portRefused !== undefined) return yield* refuseStart(portRefused)
    const resolved = yield* resolveSecrets({
      production,
      dataDir: config.dataDir,
      fromEnvironment: presentSecrets(config)
    })
    const secretsFile = join(config.dataDir, "dev-secrets.json")
    // Development only: generated so the first command works out of the box, kept for the next start in a file
    // only this account can read. Named here, never shown: no secret is written to a log.
    if (resolved.generated.length > 0) {
      yield* Effect.logInfo(`development secrets generated: ${resolved.generated.join(", ")} (kept in ${secretsFile})`)
    }
    if (resolved.read.length > 0) {
      yield* Effect.logInfo(`development secrets read from ${secretsFile}: ${resolved.read.join(", ")}`)
    }
    for (const name of resolved.missing) {
      yield* Effect.logWarning(`${name} is not set: the routes that need it fail closed until it is`)
    }
    yield* Effect.logInfo(
      Option.isSome(config.databaseUrl)
        ? "database: the Postgres server of DATABASE_URL"
        : `database: embedded, kept under ${config.dataDir}`
    )
    const oidcSigningKey = yield* resolveOidcSigningKey({
      production,
      dataDir: config.dataDir,
      fromEnvironment: Option.getOrUndefined(config.hubOidcSigningKey)
    })
    if (oidcSigningKey === undefined) {
      yield* Effect.logWarning("HUB_OIDC_SIGNING_KEY is not set: the hub's OpenID provider is off (501)")
    }
    const server = makeServer({
      config,
      secrets: resolved.secrets,
      oidcSigningKey,
      ...(production ? {} : { print })
    })
    return yield* Effect.scoped(
      Effect.gen(function* () {
        yield* Layer.build(server)
        yield* announceReady(config, print)
        return yield* Effect.never
      })
    ).pipe(
      Effect.catchCause((cause) => {
        const sentence = Cause.hasInterruptsOnly(cause)
          ? undefined
          : (dataDirInUse(cause) ?? startFailure(config, cause))
        return sentence === undefined ? Effect.failCause(cause) : refuseStart(sentence)
      })
    )
  }).pipe(
    Effect.provideService(References.MinimumLogLevel, config.logLevel),
    // Spans only when a collector takes them (OTEL_EXPORTER_OTLP_ENDPOINT): otherwise every request and every
    // statement would still build and time spans that nothing reads (5 to 15 % of a create's server CPU).
    Effect.provideService(References.TracerEnabled, Option.isSome(config.otlpEndpoint))
  )

/** The message of a data directory held by another process, when that is what ended the start. */
const dataDirInUse = (cause: Cause.Cause<unknown>) =>
  Option.getOrUndefined(
    Option.map(
      Option.filter(Cause.findErrorOption(cause), (error) => error instanceof DataDirInUse),
      (error) => (error as DataDirInUse).message
    )
  )

/**
 * Once every listener is up: where to go. Outside production as plain text for the person at the console (with
 * JSON logs, a log line would escape it); in production as a log line like the others.
 */
const announceReady = (config: ServerConfig, print: (text: string) => void) => {
  const addresses = publicUrls(config, {
    hub: config.hubPort,
    decisions: config.decisionsPort,
    tasks: config.tasksPort
  })
  const running = runningServices(config)
  const names = { hub: "hub", decisions: "decisions", tasks: "task inbox" } as const
  const served = (["hub", "decisions", "tasks"] as const).filter((service) => running.has(service))
  if (config.environment === "production") {
    return Effect.logInfo(`ready: ${served.map((service) => `${names[service]} ${addresses[service]}/`).join(", ")}`)
  }
  const mail =
    running.has("hub") && Option.isNone(config.smtpUrl)
      ? ["  sign-in links are printed here (SMTP_URL is not set)"]
      : []
  const first = running.has("hub")
    ? `ready: open ${addresses.hub}/ (the workspace: sign in there)`
    : `ready: ${served.map((service) => names[service]).join(" and ")} (the workspace is at ${addresses.hub}/)`
  return Effect.sync(() =>
    print(
      [
        first,
        ...served.map(
          (service) =>
            `  ${names[service].padEnd(10)}  ${addresses[service]}/        API docs ${addresses[service]}/api/v1/docs`
        ),
        ...mail,
        ...(running.size === 3 ? ["  demo data: npm run seed"] : [])
      ].join("\n")
    )
  )
}

/** A start that cannot go on: the reason on stderr, a non-zero exit. */
const refuseStart = (message: string) =>
  Effect.sync(() => {
    process.stderr.write(`${message}\n`)
    process.exitCode = 1
  })

// Files this process creates (the embedded database, development secrets) are this account's only.
process.umask(0o077)

const main = Effect.gen(function* () {
  const config = yield* Effect.result(
    Effect.gen(function* () {
      return yield* ServerConfig
    })
  )
  if (config._tag === "Failure") {
    // The message names the variable, e.g. `Expected a string representing a finite number at ["HUB_PORT"]`.
    const detail = config.failure.cause instanceof Error ? config.failure.cause.message : String(config.failure)
    yield* Effect.sync(() => {
      process.stderr.write(`Invalid configuration: ${detail.replace(/\s*\n\s*/g, " ")}\n`)
      process.exitCode = 1
    })
    return
  }
  const console =
    config.success.logFormat === "pretty"
      ? { logger: Logger.consolePretty(), print: (text: string) => void process.stdout.write(`${text}\n`) }
      : jsonLinesToStdout()
  return yield* serve(config.success, console.print).pipe(Effect.provide(Logger.layer([console.logger])))
})

/** SIGTERM and SIGINT end the server by interruption; once it has drained and closed, that is a clean exit. */
const teardown: Runtime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)

NodeRuntime.runMain(main, { teardown })
