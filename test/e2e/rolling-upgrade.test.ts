import { PgClient } from "@effect/sql-pg"
import { Effect } from "effect"
import { afterEach, assert, describe, it } from "vitest"
import { decisionsMigrations } from "../../adapters/sql/decisions/migrations.ts"
import { hubMigrations } from "../../adapters/sql/hub/migrations.ts"
import { type Migration, runMigrations } from "../../adapters/sql/Migrator.ts"
import { rateLimitMigrations } from "../../adapters/sql/ratelimits/migrations.ts"
import { tasksMigrations } from "../../adapters/sql/tasks/migrations.ts"
import { freshPostgres, onPostgres } from "../support/ServerDatabases.ts"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"

/**
 * The upgrade docs/deploy.md describes ("Upgrades"), on a Postgres server: a database at the previous
 * release's schema (every schema without its newest migration, as the release before it left it, with its
 * data), two instances of this release started at once on it (the first takes each migration, the other waits
 * and finds it applied), an instance of the previous release restarting before it is replaced (it leaves the
 * newer migrations alone and applies nothing), and the two new instances serving the old data and each other's
 * writes.
 */

const serverUrl = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"

const cleanups: Array<() => Promise<unknown>> = []
const running: Array<RunningServer> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop("SIGKILL")))
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const adminKey = "hub-admin-key-for-the-upgrade-test"

/** The same production-like secrets for every instance, as a deployment shares them. */
const settings = (databaseUrl: string) => ({
  DATABASE_URL: databaseUrl,
  DATA_DIR: tempDataDir(),
  LOG_FORMAT: "json",
  HUB_ADMIN_KEY: adminKey,
  HUB_SECRETS_KEY: "hub-secrets-key-for-the-upgrade-test",
  TASKS_SECRETS_KEY: "tasks-secrets-key-for-the-upgrade-test"
})

/** Every schema the bundled server migrates, with its migrations in this release. */
const schemas: ReadonlyArray<readonly [string, ReadonlyArray<Migration>]> = [
  ["hub", hubMigrations],
  ["decisions", decisionsMigrations],
  ["tasks", tasksMigrations],
  ["rate_limits", rateLimitMigrations]
]

/** What the previous release applied: each schema's migrations but its newest. */
const previousRelease = schemas.map(([schema, list]) => [schema, list.slice(0, -1)] as const)

/** Migrates every schema as `release` lists it: answers how many migrations it applied. */
const migrateAs = (url: string, release: ReadonlyArray<readonly [string, ReadonlyArray<Migration>]>) =>
  onPostgres(
    url,
    Effect.gen(function* () {
      let applied = 0
      for (const [schema, list] of release) applied += (yield* runMigrations(schema, list)).length
      return applied
    })
  )

const call = async (port: number, method: string, path: string, body?: unknown) => {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${adminKey}`,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, text, json: text.length > 0 ? (JSON.parse(text) as any) : undefined }
}

describe("a rolling upgrade on a Postgres server", () => {
  it("two new instances migrate the previous release's schema once; an old instance restarting still starts", async () => {
    const database = await freshPostgres(serverUrl, "upgrade")
    cleanups.push(database.drop)

    // The previous release's schema, with data it wrote: an organization and its owner.
    const missing = schemas.length
    assert.strictEqual(
      await migrateAs(database.url, previousRelease),
      schemas.reduce((n, [, list]) => n + list.length, 0) - missing
    )
    await onPostgres(
      database.url,
      Effect.gen(function* () {
        const sql = yield* PgClient.PgClient
        yield* sql`INSERT INTO hub.users (id, email, name, verified, created_at)
          VALUES ('usr_upgrade_ada', 'ada@acme.test', 'Ada', true, now())`
      })
    )

    // Two instances of this release start at once: each missing migration is applied once, by one of them.
    const [first, second] = await Promise.all([
      startServer(settings(database.url)),
      startServer(settings(database.url))
    ])
    running.push(first!, second!)
    const applied = (server: RunningServer) => server.output().match(/applied migration \w+ \d+ \w+/g) ?? []
    const lines = [...applied(first!), ...applied(second!)].sort()
    assert.deepStrictEqual(
      lines,
      schemas.map(([schema, list]) => `applied migration ${schema} ${list.at(-1)!.id} ${list.at(-1)!.name}`).sort()
    )

    // An instance of the previous release restarting before it is replaced leaves the newer migrations alone.
    assert.strictEqual(await migrateAs(database.url, previousRelease), 0)
    // And this release's instances find nothing left to do.
    assert.strictEqual(await migrateAs(database.url, schemas), 0)

    // The data the previous release wrote is served, and a write on one instance is read on the other.
    const users = await call(second!.ports.hub, "GET", "/api/v1/admin/users")
    assert.strictEqual(users.status, 200, users.text)
    assert.deepInclude(
      users.json.data.users.map((u: { email: string; name: string }) => ({ email: u.email, name: u.name })),
      { email: "ada@acme.test", name: "Ada" }
    )
    const org = await call(first!.ports.hub, "POST", "/api/v1/admin/orgs", { name: "Acme", tier: "monthly" })
    assert.strictEqual(org.status, 201, org.text)
    const read = await call(second!.ports.hub, "GET", `/api/v1/admin/orgs/${org.json.data.org.id}`)
    assert.strictEqual(read.status, 200, read.text)
    assert.deepStrictEqual(read.json.data.org, org.json.data.org)
    for (const server of [first!, second!]) assert.strictEqual(await server.stop("SIGTERM"), 0)
  }, 180_000)
})
