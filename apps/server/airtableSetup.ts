import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option, type Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { ensureBase } from "../../adapters/airtable/AirtableBase.ts"
import { airtableTables, type AirtableTableNames } from "../../adapters/airtable/AirtableFields.ts"
import { AirtableLimiterFromStore } from "../../adapters/airtable/AirtableLimiter.ts"
import { ServerConfig } from "./Config.ts"

/**
 * `npm run airtable:setup`: creates the tables and fields of the task inbox that the base AIRTABLE_BASE_ID lacks,
 * through the metadata API (the token needs the scopes schema.bases:read and schema.bases:write), and prints
 * what it made. It reads the server's settings (AIRTABLE_TOKEN, AIRTABLE_BASE_ID, AIRTABLE_ENDPOINT_URL,
 * AIRTABLE_TABLE_<TABLE>) and never changes or removes what exists: run twice, the second run makes nothing.
 * A table or field that exists otherwise than the task inbox needs it (another type, a name differing in case)
 * is printed to correct by hand, and the command exits non-zero.
 */

/**
 * The setup runs before the servers (they refuse a base it has not completed), in a process of its own: it paces
 * its requests by itself, a quarter of a second apart, wider than the servers do, since speed does not matter
 * here and a request delayed on a busy machine must not bunch up with the next one.
 */
const setupSpacingMillis = 250

/** Runs the setup against the base of `config` and prints what it made and what needs a hand. */
const airtableSetup = (config: {
  readonly token: Redacted.Redacted<string>
  readonly baseId: string
  readonly endpointUrl: string
  readonly tableNames: AirtableTableNames
}) =>
  Effect.gen(function* () {
    const expected = airtableTables(config.tableNames)
    const report = yield* ensureBase(config, expected)
    const lines = [
      ...report.createdTables.map((name) => {
        const table = expected.find((t) => t.name === name)!
        return `Created table ${name} with ${table.fields.map((f) => f.name).join(", ")}`
      }),
      ...report.createdFields.map((field) => `Created field ${field}`)
    ]
    lines.push(
      lines.length === 0
        ? `Nothing to make: base ${config.baseId} has every table and field of the task inbox.`
        : `Made ${report.createdTables.length} tables and ${report.createdFields.length} fields in base ${config.baseId}.`
    )
    if (report.mismatches.length > 0) {
      lines.push("The setup changes nothing that exists; correct these by hand, then run it again:")
      for (const mismatch of report.mismatches) lines.push(`  ${mismatch}`)
    }
    yield* Effect.sync(() => process.stdout.write(`${lines.join("\n")}\n`))
    return report
  }).pipe(
    Effect.provide(
      AirtableLimiterFromStore({ spacingMillis: setupSpacingMillis }).pipe(
        Layer.provide(RateLimiter.layerStoreMemory),
        Layer.merge(FetchHttpClient.layer)
      )
    )
  )

const program = Effect.gen(function* () {
  // The server's own settings: the same base, token, endpoint and table names the task inbox will use.
  const config = yield* ServerConfig
  if (Option.isNone(config.airtableToken)) return yield* fail("The setup needs AIRTABLE_TOKEN.")
  if (Option.isNone(config.airtableBaseId)) return yield* fail("The setup needs AIRTABLE_BASE_ID.")
  const report = yield* airtableSetup({
    token: config.airtableToken.value,
    baseId: config.airtableBaseId.value,
    endpointUrl: config.recordStoreEndpointUrl,
    tableNames: config.airtableTableNames
  })
  if (report.mismatches.length > 0) process.exitCode = 1
}).pipe(
  Effect.catchTags({
    BaseSchemaFailure: (failure) => fail(failure.message),
    ConfigError: (error) => fail(`A setting is not valid: ${error.message}`)
  })
)

const fail = (message: string) =>
  Effect.sync(() => {
    process.stderr.write(`${message}\n`)
    process.exitCode = 1
  })

NodeRuntime.runMain(program)
