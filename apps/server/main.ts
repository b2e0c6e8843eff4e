import { NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Exit, Layer, Logger, Option, References, Runtime } from "effect"
import { join } from "node:path"
import { presentSecrets, ServerConfig } from "./Config.ts"
import { resolveOidcSigningKey, resolveSecrets } from "./DevSecrets.ts"
import { DecisionsDataSql } from "./DecisionsData.ts"
import { makeServer } from "./Server.ts"
import { jsonLinesToStdout } from "./LogLines.ts"

const serve = (config: ServerConfig) =>
  Effect.gen(function* () {
    const production = config.environment === "production"
    const resolved = yield* resolveSecrets({
      production,
      dataDir: config.dataDir,
      fromEnvironment: presentSecrets(config)
    })
    if (resolved.generated.length > 0) {
      // Development only: generated so the first command works out of the box, kept for the next start in a
      // file only this account can read. Named here, never shown: no secret is written to a log.
      yield* Effect.logInfo(
        `development secrets generated: ${resolved.generated.join(", ")} (kept in ${join(config.dataDir, "dev-secrets.json")})`
      )
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
    return yield* Layer.launch(
      makeServer({ config, secrets: resolved.secrets, decisionsData: DecisionsDataSql, oidcSigningKey })
    ).pipe(Effect.catchTag("DataDirInUse", (error) => refuseStart(error.message)))
  }).pipe(
    Effect.provide(Logger.layer([config.logFormat === "pretty" ? Logger.consolePretty() : jsonLinesToStdout()])),
    Effect.provideService(References.MinimumLogLevel, config.logLevel),
    // Spans only when a collector takes them (OTEL_EXPORTER_OTLP_ENDPOINT): otherwise every request and every
    // statement would still build and time spans that nothing reads (5 to 15 % of a create's server CPU).
    Effect.provideService(References.TracerEnabled, Option.isSome(config.otlpEndpoint))
  )

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
  return yield* serve(config.success)
})

/** SIGTERM and SIGINT end the server by interruption; once it has drained and closed, that is a clean exit. */
const teardown: Runtime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)

NodeRuntime.runMain(main, { teardown })
