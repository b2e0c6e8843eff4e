import { PGlite } from "@electric-sql/pglite"
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"

/**
 * A new, empty embedded database costs PGlite several seconds of CPU to create (its `initdb`), and the suites
 * create one for each SQL suite of each file. The same new database loaded from a dump of its data directory
 * costs a fraction of that. Vitest's global setup (below) makes that dump once per PGlite version, kept under
 * node_modules/.cache; every in-memory test database starts from it (`freshDatabaseDump`). Nothing is migrated
 * in it: each suite still runs its migrations on a database as new as `PGlite.create()` makes one.
 */

const modules = join(process.cwd(), "node_modules")
const version = (
  JSON.parse(readFileSync(join(modules, "@electric-sql", "pglite", "package.json"), "utf8")) as { version: string }
).version
const dumpPath = join(modules, ".cache", "hitl-test-pglite", `new-${version}.tar`)

/** Vitest's global setup: the dump of a new database, made when this PGlite version has none yet. */
export default async function makeFreshDatabaseDump() {
  if (existsSync(dumpPath)) return
  const db = await PGlite.create()
  const dump = await db.dumpDataDir("none")
  await db.close()
  mkdirSync(join(dumpPath, ".."), { recursive: true })
  // Written aside and renamed, so that a run starting meanwhile never reads half a dump.
  const partial = `${dumpPath}.${process.pid}`
  writeFileSync(partial, new Uint8Array(await dump.arrayBuffer()))
  renameSync(partial, dumpPath)
}

let loaded: Blob | undefined

/** The dump of a new database, read once per test process; undefined when the global setup made none. */
export const freshDatabaseDump = (): Blob | undefined => {
  if (loaded === undefined && existsSync(dumpPath)) loaded = new Blob([readFileSync(dumpPath)])
  return loaded
}
