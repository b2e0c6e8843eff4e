import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { FactOutboxSql } from "../../adapters/sql/hub/FactOutboxSql.ts"
import { RecordUpdaterAirtableOn } from "../../adapters/airtable/RecordUpdaterAirtable.ts"
import { AirtableFromConfig, TasksRecordStoreFromConfig } from "./AirtableRuntime.ts"
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
import { DecisionsDataSql } from "./DecisionsData.ts"
import { DecisionsUseCases } from "./DecisionsLayers.ts"
import { HubDirectoryUseCases } from "./HubLayers.ts"
import { loadDecisionsDemoData } from "./DecisionsDemoData.ts"
import { demoOrganizationName, loadHubDemoData } from "./HubDemoData.ts"
import { loadDemoData } from "./TasksDemoData.ts"
import { TasksSql, tasksPublicUrl } from "./TasksRuntime.ts"

/**
 * `npm run seed`: loads the demo into the configured store (the Postgres server of DATABASE_URL, or the
 * embedded database under DATA_DIR; stop the server first when it is the embedded one): the demo people as
 * hub users in one organization, its decisions roles and an open decision, and the task inbox's data; then
 * prints one fresh task inbox API key per person and a decisions agent key. A delegation or a decision in
 * the demo lands in a real hub feed (docs/notifications.md).
 */
const program = Effect.gen(function* () {
  const config = yield* ServerConfig
  const database = Database.layer({ url: Option.getOrUndefined(config.databaseUrl), dataDir: config.dataDir })
  const migrations = Layer.mergeAll(
    migrationsLayer("hub", hubMigrations),
    migrationsLayer("decisions", decisionsMigrations),
    migrationsLayer("tasks", tasksMigrations)
  )
  const airtable = AirtableFromConfig(config, RateLimiterStoreFromConfig(config))
  const tasks = TasksSql({
    publicUrl: tasksPublicUrl(config, config.tasksPort),
    machineKeys: config.tasksMachineKeys,
    records: TasksRecordStoreFromConfig(config, airtable)
  })
  // The demo registers no service: no secrets key, so the registry stays closed.
  const hub = HubDirectoryUseCases(
    { secretsKey: undefined, allowLoopbackHttp: false },
    Layer.mergeAll(DirectorySql, ServiceStoreSql, FactOutboxSql)
  )
  // The demo only reads and writes data: no secrets key, so nothing is sealed and no worker runs.
  const decisions = DecisionsUseCases(
    { secretsKey: undefined, allowLoopbackHttp: false },
    {
      data: Layer.merge(DecisionsDataSql, TransactionsSql),
      recordUpdater: RecordUpdaterAirtableOn.pipe(Layer.provide(airtable)),
      webhookSender: WebhookSenderHttp({ allowLoopback: false })
    }
  )
  const stores = Layer.mergeAll(tasks, hub, decisions).pipe(Layer.provide(migrations), Layer.provide(database))
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
  const lines = [
    loaded ? `Demo data loaded into ${where}.` : `Demo data was already in ${where}; nothing changed.`,
    `Hub: ${demoOrganizationName} (organization ${hubDemo.orgId}) with Alice (owner), Bob (admin) and Carol.`,
    ...(hubDemo.notInstalled.length === 0
      ? []
      : [`  Not installed yet (start the server once, then run the seed again): ${hubDemo.notInstalled.join(", ")}`]),
    "Task inbox API keys (shown once; send as X-API-Key):",
    ...tasksDemo.keys.map((k) => `  ${k.name.padEnd(14)} ${k.email.padEnd(26)} ${k.key}`),
    "Decisions agent key (shown once; send as Authorization: Bearer):",
    `  ${decisionsDemo.callerKey}`,
    ""
  ]
  yield* Effect.sync(() => process.stdout.write(lines.join("\n")))
})

// Files this process creates (the embedded database) are this account's only.
process.umask(0o077)

NodeRuntime.runMain(
  program.pipe(
    Effect.catchTag("DataDirInUse", (error) =>
      Effect.sync(() => {
        process.stderr.write(`${error.message}\n`)
        process.exitCode = 1
      })
    )
  )
)
