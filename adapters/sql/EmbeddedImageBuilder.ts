import { Effect } from "effect"
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { Database } from "./Database.ts"
import type { SqlError } from "effect/sql"
import type { DataDirInUse } from "./DataDir.ts"
import {
  databaseName,
  EmbeddedImageFailed,
  manifestName,
  manifestOf,
  readManifest,
  type ImageSchema
} from "./EmbeddedImage.ts"
import { runMigrations } from "./Migrator.ts"

/**
 * Makes an image at `target`: a new embedded database, every schema migrated in turn by the same code as a
 * server's start, closed cleanly, then its files and the manifest renamed into place together. Nothing else
 * runs: no secret is read or generated, no row is written but each schema's migration records. An image
 * already complete at `target` is kept (servers started together may both make one; the first rename wins).
 */
export const buildEmbeddedImage = (options: {
  readonly target: string
  readonly schemas: ReadonlyArray<ImageSchema>
}): Effect.Effect<void, EmbeddedImageFailed | SqlError.SqlError | DataDirInUse> =>
  Effect.gen(function* () {
    const target = Path.resolve(options.target)
    if (readManifest(target) !== undefined) return
    const building = `${target}.tmp-${process.pid}`
    yield* Effect.sync(() => {
      rmSync(building, { recursive: true, force: true })
      mkdirSync(Path.dirname(target), { recursive: true })
    })
    yield* Effect.forEach(options.schemas, ({ schema, migrations }) => runMigrations(schema, migrations), {
      discard: true
    }).pipe(Effect.provide(Database.layerEmbedded({ dataDir: building })))
    yield* Effect.try({
      try: () => {
        // Only the database files and the manifest: the lock file is gone with the layer.
        for (const name of readdirSync(building)) {
          if (name !== databaseName) rmSync(Path.join(building, name), { recursive: true, force: true })
        }
        writeFileSync(Path.join(building, manifestName), JSON.stringify(manifestOf(options.schemas), null, 2) + "\n")
        try {
          renameSync(building, target)
        } catch (error) {
          if (readManifest(target) === undefined) throw error
          rmSync(building, { recursive: true, force: true })
        }
      },
      catch: (cause) => new EmbeddedImageFailed({ message: "the image's files could not be written", cause })
    })
  }).pipe(
    Effect.onError(() =>
      Effect.sync(() => rmSync(`${Path.resolve(options.target)}.tmp-${process.pid}`, { recursive: true, force: true }))
    )
  )
