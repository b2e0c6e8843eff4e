import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { Database } from "../../adapters/sql/Database.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { tasksMigrations } from "../../adapters/sql/tasks/migrations.ts"
import { ServerConfig } from "./Config.ts"
import { loadDemoData } from "./TasksDemoData.ts"
import { TasksSql, tasksPublicUrl } from "./TasksRuntime.ts"

/**
 * `npm run seed`: loads the task inbox's demo data into the configured store (the Postgres server of
 * DATABASE_URL, or the embedded database under DATA_DIR; stop the server first when it is the embedded one)
 * and prints one fresh API key per demo person.
 */
const program = Effect.gen(function* () {
  const config = yield* ServerConfig
  const database = Database.layer({ url: Option.getOrUndefined(config.databaseUrl), dataDir: config.dataDir })
  const tasks = TasksSql({
    publicUrl: tasksPublicUrl(config, config.tasksPort),
    machineKeys: config.tasksMachineKeys
  }).pipe(Layer.provide(migrationsLayer("tasks", tasksMigrations)), Layer.provide(database))
  const { loaded, keys } = yield* loadDemoData.pipe(Effect.provide(tasks))
  const where = Option.isSome(config.databaseUrl)
    ? "the DATABASE_URL server"
    : `the embedded database under ${config.dataDir}`
  const lines = [
    loaded ? `Demo data loaded into ${where}.` : `Demo data was already in ${where}; nothing changed.`,
    "API keys (shown once; send as X-API-Key):",
    ...keys.map((k) => `  ${k.name.padEnd(14)} ${k.email.padEnd(26)} ${k.key}`),
    ""
  ]
  yield* Effect.sync(() => process.stdout.write(lines.join("\n")))
})

NodeRuntime.runMain(program)
