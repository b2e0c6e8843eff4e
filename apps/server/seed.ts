import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { FactOutboxSql } from "../../adapters/sql/hub/FactOutboxSql.ts"
import { RecordUpdaterAirtableOn } from "../../adapters/airtable/RecordUpdaterAirtable.ts"
import { AirtableFromConfig, TasksRecordStoreFromConfig } from "./tasks/AirtableRuntime.ts"
import { RateLimiterStoreFromConfig } from "./RateLimitsRuntime.ts"
import { WebhookSenderHttp } from "../../adapters/http/WebhookSenderHttp.ts"
import { Database } from "../../adapters/sql/Database.ts"
import { decisionsMigrations } from "../../adapters/sql/decisions/migrations.ts"
import { DirectorySql } from "../../adapters/sql/hub/DirectorySql.ts"
import { hubMigrations } from "../../adapters/sql/hub/migrations.ts"
import { ServiceStoreSql } from "../../adapters/sql/hub/ServiceStoreSql.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { tasksMigrations } from "../../adapters/sql/tasks/migrations.ts"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import { ServerConfig } from "./Config.ts"
import { publicUrls, serviceUrls } from "./Addresses.ts"
import type { DataDirInUse } from "../../adapters/sql/DataDir.ts"
import { DecisionsDataSql } from "./decisions/DecisionsData.ts"
import { DecisionsUseCases } from "./decisions/DecisionsLayers.ts"
import { HubDirectoryUseCases } from "./hub/HubLayers.ts"
import { loadDecisionsDemoData } from "./DecisionsDemoData.ts"
import { demoOrganizationName, loadHubDemoData } from "./HubDemoData.ts"
import { loadDemoData } from "./TasksDemoData.ts"
import { TasksDataWith, TasksUseCasesWithKeys, tasksPublicUrl } from "./tasks/TasksRuntime.ts"

/**
 * `npm run seed`: loads the demo into the configured store (the Postgres server of DATABASE_URL, or the
 * embedded database under DATA_DIR; a server running on the embedded one holds it, and the seed says what to
 * do): the demo people as hub users in one organization, its decisions roles and an open decision, and the
 * task inbox's data; then prints one fresh task inbox API key per person, a decisions agent key with the roles
 * it can ask, and where to go next (the workspace's address, the person to sign in as). A delegation or a
 * decision in the demo lands in a real hub feed (docs/notifications.md).
 */
const program = (config: ServerConfig) =>
  Effect.gen(function* () {
    const database = Database.layer({ url: Option.getOrUndefined(config.databaseUrl), dataDir: config.dataDir })
    const migrations = Layer.mergeAll(
      migrationsLayer("hub", hubMigrations),
      migrationsLayer("decisions", decisionsMigrations),
      migrationsLayer("tasks", tasksMigrations)
    )
    const airtable = AirtableFromConfig(config, RateLimiterStoreFromConfig(config))
    const tasks = TasksUseCasesWithKeys(
      { publicUrl: tasksPublicUrl(config, config.tasksPort), machineKeys: config.tasksMachineKeys },
      TasksDataWith(TasksRecordStoreFromConfig(config, airtable))
    )
    // The demo registers no service: no secrets key, so the registry stays closed.
    const hub = HubDirectoryUseCases(
      { secretsKey: undefined, allowLoopbackHttp: false },
      Layer.mergeAll(DirectorySql, ServiceStoreSql, FactOutboxSql)
    )
    // The demo only reads and writes data: no secrets key, so nothing is sealed and no worker runs.
    const decisions = DecisionsUseCases(
      { secretsKey: undefined, allowLoopbackHttp: false },
      {
        data: DecisionsDataSql,
        recordUpdater: RecordUpdaterAirtableOn.pipe(Layer.provide(airtable)),
        webhookSender: WebhookSenderHttp({ allowLoopback: false })
      }
    )
    // The one unit of work over the database, shared by the three services' stores.
    const stores = Layer.mergeAll(tasks, hub, decisions).pipe(
      Layer.provide(TransactionsSql),
      Layer.provide(migrations),
      Layer.provide(database)
    )
    const { hubDemo, decisionsDemo, tasksDemo } = yield* Effect.gen(function* () {
      const hubDemo = yield* loadHubDemoData
      const decisionsDemo = yield* loadDecisionsDemoData(hubDemo.orgId)
      const tasksDemo = yield* loadDemoData
      return { hubDemo, decisionsDemo, tasksDemo }
    }).pipe(Effect.provide(stores))
    const where = Option.isSome(config.databaseUrl)
      ? "the DATABASE_URL server"
      : `the embedded database under ${config.dataDir}`
    const loaded = tasksDemo.loaded || decisionsDemo.loaded || hubDemo.created
    const ports = { hub: config.hubPort, decisions: config.decisionsPort, tasks: config.tasksPort }
    const addresses = publicUrls(config, ports)
    const running = yield* answers(`${serviceUrls(config, ports).hub}/api/v1/health`)
    const embedded = Option.isNone(config.databaseUrl)
    const lines = [
      loaded ? `Demo data loaded into ${where}.` : `Demo data was already in ${where}; nothing changed.`,
      `Hub: ${demoOrganizationName} (organization ${hubDemo.orgId}) with Alice (owner), Bob (admin) and Carol.`,
      ...(hubDemo.notInstalled.length === 0
        ? []
        : [
            `  Not installed yet: ${hubDemo.notInstalled.join(", ")} (the server registers them at its first start: ${
              embedded ? "start it once, stop it" : "start it once"
            }, then run npm run seed again)`
          ]),
      "Task inbox API keys (shown once; send as X-API-Key):",
      ...tasksDemo.keys.map((k) => `  ${k.name.padEnd(14)} ${k.email.padEnd(26)} ${k.key}`),
      "Decisions agent key (shown once; send as Authorization: Bearer):",
      `  ${decisionsDemo.callerKey}`,
      `  It asks the roles ${decisionsDemo.roles.join(", ")} (roleSlug) of ${demoOrganizationName}, for example:`,
      `  curl -s ${addresses.decisions}/api/v1/decisions -H "Authorization: Bearer ${decisionsDemo.callerKey}" \\`,
      `    -H "Idempotency-Key: first-1" -H "Content-Type: application/json" \\`,
      `    -d '{"title":"Ship it?","roleSlug":"${decisionsDemo.roles[0] ?? "approvers"}","options":[{"label":"Yes"},{"label":"No"}]}'`,
      "",
      running
        ? `Next: open ${addresses.hub}/ and sign in as ${demoSignIn} (the sign-in link is printed in the server's console).`
        : `Next: start the server (npm start; again, if you stopped it to seed), then open ${addresses.hub}/ and sign in as ${demoSignIn} (the sign-in link is printed in its console).`,
      ""
    ]
    yield* Effect.sync(() => process.stdout.write(lines.join("\n")))
  })

/** The person to sign in as: the demo organization's owner. */
const demoSignIn = "alice@demo.example.com"

/** Whether something answers at `url` within a second (the server, running). */
const answers = (url: string) =>
  Effect.promise(() =>
    fetch(url, { signal: AbortSignal.timeout(1_000) }).then(
      (response) => response.ok,
      () => false
    )
  )

/**
 * The embedded database is one process's at a time: with the server running on it, the seed cannot open it.
 * Says exactly what to do instead, and ends non-zero (nothing was loaded).
 */
const serverHoldsData = (config: ServerConfig, error: DataDirInUse) =>
  Effect.sync(() => {
    process.stderr.write(
      [
        `The server (process ${error.pid}) has the embedded database under ${config.dataDir} open, and only one process may.`,
        "To load the demo: stop the server (Ctrl-C where it runs), run npm run seed again, then start the server again (npm start).",
        "(On a Postgres server, DATABASE_URL, the seed runs beside a running server.)",
        ""
      ].join("\n")
    )
    process.exitCode = 1
  })

// Files this process creates (the embedded database) are this account's only.
process.umask(0o077)

NodeRuntime.runMain(
  Effect.gen(function* () {
    const config = yield* ServerConfig
    return yield* program(config).pipe(Effect.catchTag("DataDirInUse", (error) => serverHoldsData(config, error)))
  })
)
