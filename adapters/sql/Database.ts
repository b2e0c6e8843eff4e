import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Layer, type Redacted, type Scope } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient, SqlError } from "effect/sql"
import { chmod, mkdir, mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { Unavailable } from "../../core/kernel/Errors.ts"
import { keepNoCompiledStatements } from "./CompiledStatements.ts"
import { DataDirInUse, lockDataDir, restrictPermissions } from "./DataDir.ts"
import { seedFromImage, type EmbeddedImage } from "./EmbeddedImage.ts"

/** Where the data lives: a Postgres server (`DATABASE_URL`), or PGlite inside this process. */
export type DatabaseKind = "postgres" | "embedded"

export interface DatabaseTimeouts {
  /** Bounds opening one connection, TCP and startup included. Default 5 s. */
  readonly connectTimeout?: Duration.Input | undefined
  /** Bounds `ping`. Default 2 s. */
  readonly pingTimeout?: Duration.Input | undefined
}

export interface DatabaseConfig extends DatabaseTimeouts {
  /** A Postgres server. When set, `dataDir` is not used. */
  readonly url?: Redacted.Redacted<string> | undefined
  /** The embedded default keeps its files under `<dataDir>/pglite`. */
  readonly dataDir: string
  /** The pool size for a Postgres server. Default 10. (The embedded database always has one.) */
  readonly maxConnections?: number | undefined
  /** Where a new embedded database is copied from, when it fits (see `EmbeddedImage`). Default none. */
  readonly image?: EmbeddedImage | undefined
}

/** Every layer here provides these: `Database` plus effect's `SqlClient` and sql-pg's `PgClient`, one pool. */
export type DatabaseServices = Database | SqlClient.SqlClient | PgClient.PgClient

/**
 * The database a server runs on. Both kinds are reached through @effect/sql-pg, so every repository runs the
 * same SQL on both. `ping` answers readiness: it fails with `Unavailable` within `pingTimeout`.
 */
export class Database extends Context.Service<
  Database,
  {
    readonly kind: DatabaseKind
    readonly ping: Effect.Effect<void, Unavailable>
  }
>()("adapters/sql/Database") {
  /** A Postgres server when `url` is set, else the embedded default kept on disk under `dataDir`. */
  static readonly layer = (config: DatabaseConfig): Layer.Layer<DatabaseServices, SqlError.SqlError | DataDirInUse> =>
    config.url !== undefined
      ? Database.layerPostgres({ ...config, url: config.url })
      : Database.layerEmbedded({ ...config, dataDir: config.dataDir })

  static readonly layerPostgres = (
    config: DatabaseTimeouts & { readonly url: Redacted.Redacted<string>; readonly maxConnections?: number | undefined }
  ): Layer.Layer<DatabaseServices, SqlError.SqlError> =>
    withClient("postgres", config, () =>
      PgClient.make({
        url: config.url,
        // Each wake-up channel (LISTEN) keeps a connection of its own: six with all three services in one process.
        maxConnections: config.maxConnections ?? 20,
        connectTimeout: config.connectTimeout ?? defaultConnectTimeout
      })
    )

  /**
   * PGlite with its data on disk under `<dataDir>/pglite`: opened when there, else copied from `image` when
   * that fits, else created. One process at a time: the data directory is locked for the layer's life (see
   * `lockDataDir`), and kept readable by this account only.
   */
  static readonly layerEmbedded = (
    config: DatabaseTimeouts & { readonly dataDir: string; readonly image?: EmbeddedImage | undefined }
  ): Layer.Layer<DatabaseServices, SqlError.SqlError | DataDirInUse> =>
    Layer.unwrap(
      Effect.gen(function* () {
        const root = Path.resolve(config.dataDir)
        yield* lockDataDir(root)
        yield* Effect.acquireRelease(restrictPermissions(root), () => restrictPermissions(root))
        const databaseDir = Path.join(root, "pglite")
        if (config.image !== undefined) yield* seedFromImage(config.image, databaseDir)
        return embedded(databaseDir, root, config)
      })
    )

  /**
   * PGlite in memory, gone when the layer is released: for tests and demos. With `from`, a data directory
   * PGlite dumped (`dumpDataDir`, uncompressed) is loaded instead of creating a new one: a dump of a new
   * database starts the same database without paying for its creation again.
   */
  static readonly layerMemory = (
    config: DatabaseTimeouts & { readonly from?: Blob | undefined } = {}
  ): Layer.Layer<DatabaseServices, SqlError.SqlError> => embedded(undefined, undefined, config)
}

const defaultConnectTimeout = Duration.seconds(5)
const defaultPingTimeout = Duration.seconds(2)

const withClient = (
  kind: DatabaseKind,
  timeouts: DatabaseTimeouts,
  acquire: () => Effect.Effect<PgClient.PgClient, SqlError.SqlError, Scope.Scope | Reactivity.Reactivity>
): Layer.Layer<DatabaseServices, SqlError.SqlError> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const client = yield* acquire()
      keepNoCompiledStatements(client)
      const ping = client`SELECT 1`.pipe(
        Effect.asVoid,
        Effect.timeout(timeouts.pingTimeout ?? defaultPingTimeout),
        Effect.mapError((cause) => new Unavailable({ message: "The database is not reachable.", cause }))
      )
      return Context.make(PgClient.PgClient, client).pipe(
        Context.add(SqlClient.SqlClient, client),
        Context.add(Database, Database.of({ kind, ping }))
      )
    })
  ).pipe(Layer.provide(Reactivity.layer))

const startFailure = (message: string) => (cause: unknown) =>
  new SqlError.SqlError({ reason: new SqlError.ConnectionError({ cause, message, operation: "open" }) })

/**
 * Where the embedded database's socket lives: `<dataDir>/pglite.sock`, or, when that path is longer than a
 * Unix socket's address may be (about 100 bytes) or there is no data directory, a new folder of this account's
 * own under the system's temporary folder. Either folder is 0700: no other account can reach the socket.
 */
const socketPath = (root: string | undefined) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      if (root !== undefined && Buffer.byteLength(Path.join(root, socketName)) <= maxSocketPath) {
        // A socket left by a killed process: the data directory's lock, held now, says nobody uses it.
        await rm(Path.join(root, socketName), { force: true })
        return { path: Path.join(root, socketName), temporary: undefined }
      }
      const temporary = await mkdtemp(Path.join(tmpdir(), "hitl-db-"))
      await chmod(temporary, 0o700)
      return { path: Path.join(temporary, socketName), temporary }
    }),
    ({ path, temporary }) =>
      Effect.promise(() => rm(temporary ?? path, { recursive: true, force: true }).catch(() => undefined))
  ).pipe(Effect.map(({ path }) => path))

const socketName = "pglite.sock"
const maxSocketPath = 100

/**
 * PGlite served on a Unix socket that only this account can reach (see `socketPath`), and reached like any
 * Postgres server. Never a TCP port: the embedded database trusts whoever connects (it has no passwords), so a
 * loopback port would let any local account act as the database's superuser. Acquired in the order PGlite,
 * socket server, pool, so the scope releases them pool first, then the server, then PGlite (which flushes its
 * files on close).
 */
const embedded = (
  dataDir: string | undefined,
  root: string | undefined,
  timeouts: DatabaseTimeouts & { readonly from?: Blob | undefined }
) =>
  withClient("embedded", timeouts, () =>
    Effect.gen(function* () {
      const db = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            if (dataDir === undefined)
              return timeouts.from === undefined ? PGlite.create() : PGlite.create({ loadDataDir: timeouts.from })
            await mkdir(dataDir, { recursive: true, mode: 0o700 })
            const db = await PGlite.create({ dataDir })
            // The files PGlite just created or opened: this account only, whatever the process's umask.
            await Effect.runPromise(restrictPermissions(dataDir))
            return db
          },
          catch: startFailure("Failed to open the embedded database")
        }),
        (db) => Effect.tryPromise(() => db.close()).pipe(Effect.ignore({ log: "Warn" }))
      )
      const path = yield* socketPath(root)
      yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            // PGlite is one session. The pool keeps one connection; the second slot only lets a
            // replacement connection (or a CancelRequest) in while the old socket is still closing.
            const server = new PGLiteSocketServer({ db, path, maxConnections: 2 })
            await server.start()
            await chmod(path, 0o600)
            return server
          },
          catch: startFailure("Failed to serve the embedded database")
        }),
        (server) => Effect.tryPromise(() => server.stop()).pipe(Effect.ignore({ log: "Warn" }))
      )
      return yield* PgClient.make({
        path,
        username: "postgres",
        database: "postgres",
        maxConnections: 1,
        // Keep the one session open: every new connection joins PGlite's single backend anyway.
        idleTimeout: Duration.infinity,
        connectTimeout: timeouts.connectTimeout ?? defaultConnectTimeout
      })
    })
  )
