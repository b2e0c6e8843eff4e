import { Effect, Schema, type Scope } from "effect"
import { chmod, mkdir, readdir, readFile, stat, unlink, writeFile } from "node:fs/promises"
import * as Path from "node:path"

/** Another live process holds the embedded database: two writers would corrupt it. */
export class DataDirInUse extends Schema.TaggedError<DataDirInUse>()("DataDirInUse", {
  message: Schema.String,
  pid: Schema.Number
}) {}

const lockName = "pglite.lock"

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const readHolder = (path: string) =>
  readFile(path, "utf8").then(
    (text) => {
      const pid = Number((JSON.parse(text) as { pid?: unknown }).pid)
      return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
    },
    () => undefined
  )

/**
 * Only this account may read or write the data: the directory 0700, everything under it 0700 (folders) or
 * 0600 (files), whatever mode a file was created with. Walked without following links.
 */
export const restrictPermissions = (dir: string): Effect.Effect<void> =>
  Effect.promise(async () => {
    const pending = [dir]
    while (pending.length > 0) {
      const current = pending.pop()!
      const info = await stat(current).catch(() => undefined)
      if (info === undefined) continue
      if (info.isDirectory()) {
        await chmod(current, 0o700).catch(() => undefined)
        const entries = await readdir(current, { withFileTypes: true }).catch(() => [])
        for (const entry of entries) {
          if (entry.isDirectory()) pending.push(Path.join(current, entry.name))
          else if (entry.isFile()) await chmod(Path.join(current, entry.name), 0o600).catch(() => undefined)
        }
      }
    }
  })

/**
 * Holds `<dir>/pglite.lock` (the holder's pid, created exclusively, 0600) for the scope: a second process
 * on the same data (a server, `npm run seed`) fails with `DataDirInUse` naming the holder's pid. A lock
 * whose process is gone (killed, crashed) is stale and taken over; so is one naming this very process
 * (a container restarted with the same pid).
 */
export const lockDataDir = (dir: string): Effect.Effect<void, DataDirInUse, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const path = Path.join(dir, lockName)
      const content = JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() }) + "\n"
      yield* Effect.promise(() => mkdir(dir, { recursive: true, mode: 0o700 }))
      for (let attempt = 0; attempt < 3; attempt++) {
        const created = yield* Effect.promise(() =>
          writeFile(path, content, { flag: "wx", mode: 0o600 }).then(
            () => true,
            (error: NodeJS.ErrnoException) => {
              if (error.code === "EEXIST") return false
              throw error
            }
          )
        )
        if (created) return path
        const holder = yield* Effect.promise(() => readHolder(path))
        if (holder !== undefined && holder !== process.pid && isAlive(holder)) {
          return yield* new DataDirInUse({
            pid: holder,
            message:
              `The embedded database under ${dir} is in use by process ${holder}: stop it first ` +
              `(if no server of this project runs as ${holder}, delete ${path}).`
          })
        }
        yield* Effect.promise(() => unlink(path).catch(() => undefined))
      }
      return yield* Effect.die(new Error(`could not take the lock ${path}`))
    }),
    (path) =>
      Effect.promise(async () => {
        if ((await readHolder(path)) === process.pid) await unlink(path).catch(() => undefined)
      })
  ).pipe(Effect.asVoid)
