import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { execFile, spawn } from "node:child_process"
import { once } from "node:events"
import {
  type BaseIncomplete,
  type BaseSchemaFailure,
  checkBase,
  describeBase,
  ensureBase
} from "../../adapters/airtable/AirtableBase.ts"
import { AirtableFields, airtableTables, defaultTableNames } from "../../adapters/airtable/AirtableFields.ts"
import { AirtableLimiterFromStore } from "../../adapters/airtable/AirtableLimiter.ts"
import { type AirtableStandIn, type StandInOptions, startAirtableStandIn } from "../fakes/AirtableStandIn.ts"

const baseId = "appSetupTest00001"
const token = "patSetup.0123456789abcdef"

const withStandIn = <A, E, R>(
  use: (standIn: AirtableStandIn) => Effect.Effect<A, E, R>,
  options: Partial<StandInOptions> = {}
) =>
  Effect.acquireUseRelease(
    Effect.promise(() => startAirtableStandIn({ tokens: [token], bases: { [baseId]: {} }, ...options })),
    use,
    (standIn) => Effect.promise(() => standIn.close())
  )

/** `npm run airtable:setup` as a user runs it, against the stand-in. */
const setup = (standIn: AirtableStandIn, env: Record<string, string | undefined> = {}) =>
  Effect.promise(
    () =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          "npm",
          ["run", "-s", "airtable:setup"],
          {
            env: Object.fromEntries(
              Object.entries({
                ...process.env,
                AIRTABLE_ENDPOINT_URL: standIn.url,
                AIRTABLE_BASE_ID: baseId,
                AIRTABLE_TOKEN: token,
                ...env
              }).filter(([, value]) => value !== undefined)
            )
          },
          (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })
        )
      })
  )

const config = (standIn: AirtableStandIn) => ({ endpointUrl: standIn.url, baseId, token: Redacted.make(token) })
// Paced as the setup command paces itself; a 429 pauses the base for as long as the stand-in below refuses.
const limiter = AirtableLimiterFromStore({ spacingMillis: 250, pauseMillis: 500 }).pipe(
  Layer.provide(RateLimiter.layerStoreMemory),
  Layer.merge(FetchHttpClient.layer)
)

const incomplete = <R>(check: Effect.Effect<void, BaseIncomplete | BaseSchemaFailure, R>) =>
  check.pipe(
    Effect.flip,
    Effect.map((error) => (error._tag === "BaseIncomplete" ? error : assert.fail(error.message)))
  )

describe("setting up a base for the task inbox (npm run airtable:setup, against the stand-in)", () => {
  it.live(
    "creates every missing table and field and says so; run again it makes nothing; within 5 requests a second",
    () =>
      withStandIn((standIn) =>
        Effect.gen(function* () {
          const first = yield* setup(standIn)
          assert.strictEqual(first.code, 0, first.stderr)
          for (const table of AirtableFields) assert.include(first.stdout, `Created table ${table.name} with`)
          assert.include(first.stdout, `Made 8 tables and 0 fields in base ${baseId}.`)
          const schema = yield* describeBase(config(standIn)).pipe(Effect.provide(limiter))
          for (const table of AirtableFields) {
            const made = schema.tables.find((t) => t.name === table.name)!
            for (const field of table.fields) {
              const found = made.fields.find((f) => f.name === field.name)
              assert.strictEqual(found?.type, field.type, `${table.name}.${field.name}`)
            }
          }
          const projects = schema.tables.find((t) => t.name === "Projects")!
          const tasks = schema.tables.find((t) => t.name === "Tasks")!
          assert.strictEqual(tasks.fields.find((f) => f.name === "Project")!.options!.linkedTableId, projects.id)
          const requests = standIn.requests.length

          const second = yield* setup(standIn)
          assert.strictEqual(second.code, 0, second.stderr)
          assert.strictEqual(
            second.stdout,
            `Nothing to make: base ${baseId} has every table and field of the task inbox.\n`
          )
          assert.deepStrictEqual(
            standIn.requests.slice(requests).map((r) => r.method),
            ["GET"]
          )
          assert.isAtMost(standIn.busiestSecond(baseId), 5)
          assert.isTrue(standIn.requests.every((r) => r.status === 200))
        })
      ),
    60_000
  )

  it.live("adds the fields a table lacks, keeps what exists, and names what it cannot correct", () =>
    withStandIn(
      (standIn) =>
        Effect.gen(function* () {
          const names = { ...defaultTableNames, clients: "Customers" }
          const expected = airtableTables(names)
          const clients = expected.find((t) => t.table === "clients")!
          const before = yield* incomplete(checkBase(config(standIn), expected))
          assert.deepStrictEqual(before.missingTables, [
            "Tasks",
            "Projects",
            "Outcomes",
            "Meetings",
            "Proposals",
            "Collaborators",
            "Settings"
          ])
          assert.include(before.missingFields, "Customers.Name")
          assert.include(before.missingFields, "Tasks.Title")
          assert.include(before.missingFields, "Proposals.Task")
          assert.notInclude(before.missingFields, "Customers.Record ID")
          assert.deepStrictEqual(before.mismatches, [
            "field Customers.Created At: is a singleLineText field; the task inbox needs dateTime"
          ])
          assert.include(before.message, "missing tables: Tasks, Projects")
          assert.include(before.message, "Customers.Name")

          // A 429 on the way pauses the base, then the setup carries on.
          standIn.failNext.push({ status: 429, type: "RATE_LIMIT_REACHED" })
          const report = yield* ensureBase(config(standIn), expected)
          assert.strictEqual(report.createdTables.length, 7)
          assert.deepStrictEqual(report.createdFields, ["Customers.Name"])
          assert.deepStrictEqual(report.mismatches, before.mismatches)
          assert.strictEqual(
            standIn.table(baseId, "Customers").fields.find((f) => f.name === "Created At")!.type,
            "singleLineText"
          )

          const after = yield* incomplete(checkBase(config(standIn), expected))
          assert.deepStrictEqual([after.missingTables, after.missingFields], [[], []])
          assert.deepStrictEqual(after.mismatches, before.mismatches)
          const complete = yield* checkBase(
            config(standIn),
            expected.map((t) =>
              t.table === "clients" ? { ...t, fields: clients.fields.filter((f) => f.name !== "Created At") } : t
            )
          ).pipe(Effect.provide(limiter))
          assert.isUndefined(complete)
        }).pipe(Effect.provide(limiter)),
      {
        // The clients' table already there, lacking a field and holding another with the wrong type.
        bases: {
          [baseId]: {
            Customers: {
              fields: ["Record ID", { name: "Created At", type: "singleLineText" }]
            }
          }
        },
        // This test is not about the limit: were a busy machine to bunch two requests, the base recovers soon.
        rateLimit: { perSecond: 5, penaltyMs: 500 }
      }
    )
  )

  it.live("a refused token or an unknown base fails with a message for the operator, and a non-zero exit", () =>
    withStandIn((standIn) =>
      Effect.gen(function* () {
        const refused = yield* setup(standIn, { AIRTABLE_TOKEN: "patWrong" })
        assert.notStrictEqual(refused.code, 0)
        assert.strictEqual(refused.stderr.trim(), "The token was refused (AIRTABLE_TOKEN).")
        const unknown = yield* setup(standIn, { AIRTABLE_BASE_ID: "appUnknownBase001" })
        assert.notStrictEqual(unknown.code, 0)
        assert.include(unknown.stderr, "schema.bases:read")
        const missing = yield* setup(standIn, { AIRTABLE_TOKEN: undefined })
        assert.notStrictEqual(missing.code, 0)
        assert.strictEqual(missing.stderr, "The setup needs AIRTABLE_TOKEN.\n")
        const invalid = yield* setup(standIn, { AIRTABLE_BASE_ID: "base" })
        assert.notStrictEqual(invalid.code, 0)
        assert.include(invalid.stderr, "AIRTABLE_BASE_ID")
        assert.strictEqual(standIn.requests.length, 2)
      })
    )
  )

  it.live("npm run airtable:stand-in serves one empty base on its own and prints the settings the setup takes", () =>
    Effect.gen(function* () {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", "test/fakes/airtable/StandInCli.ts", "--token", token, "--base", baseId],
        { env: { ...process.env, AIRTABLE_TOKEN: "patFromTheEnvironment" }, stdio: ["ignore", "pipe", "pipe"] }
      )
      yield* Effect.addFinalizer(() => Effect.sync(() => child.exitCode === null && child.kill("SIGKILL")))
      let printed = ""
      child.stdout.on("data", (chunk: Buffer) => (printed += chunk.toString()))
      while (!printed.includes("npm run airtable:setup")) {
        if (child.exitCode !== null) return assert.fail(`the stand-in stopped: ${printed}`)
        yield* Effect.sleep("50 millis")
      }
      const url = /AIRTABLE_ENDPOINT_URL=(http:\/\/127\.0\.0\.1:\d+)\n/.exec(printed)?.[1]
      assert.isDefined(url, printed)
      assert.include(printed, `AIRTABLE_BASE_ID=${baseId}\n`)
      assert.include(printed, `AIRTABLE_TOKEN=${token}\n`)
      const get = (bearer: string) =>
        Effect.promise(() =>
          fetch(`${url}/v0/meta/bases/${baseId}/tables`, { headers: { authorization: `Bearer ${bearer}` } }).then(
            async (r) => ({ status: r.status, body: await r.json() })
          )
        )
      assert.deepStrictEqual(yield* get(token), { status: 200, body: { tables: [] } })
      assert.strictEqual((yield* get("patFromTheEnvironment")).status, 401)

      child.kill("SIGINT")
      const [code] = yield* Effect.promise(() => once(child, "close"))
      // Stopped by Ctrl-C: it says how busy the base was, closes its port and exits as an interrupted program.
      assert.strictEqual(code, 130)
      assert.include(printed, "Stopped after 2 requests; at most 2 to the base in any second; 0 answered 429.")
      const refusedBase = spawn(
        process.execPath,
        ["--import", "tsx", "test/fakes/airtable/StandInCli.ts", "--base", "appShort"],
        { stdio: ["ignore", "pipe", "pipe"] }
      )
      let said = ""
      refusedBase.stdout.on("data", (chunk: Buffer) => (said += chunk.toString()))
      refusedBase.stderr.on("data", (chunk: Buffer) => (said += chunk.toString()))
      yield* Effect.promise(() => once(refusedBase, "close"))
      assert.include(said, "appShort is not a base id: app and 14 letters or digits")
      assert.notInclude(said, "listens at")
      const refused = yield* Effect.promise(() =>
        fetch(`${url}/v0/meta/bases`).then(
          () => "answered",
          () => "refused"
        )
      )
      assert.strictEqual(refused, "refused")
    }).pipe(Effect.scoped)
  )
})
