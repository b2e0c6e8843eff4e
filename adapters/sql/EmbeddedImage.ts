import { Effect, Schema } from "effect"
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs"
import * as Path from "node:path"
import type { Migration } from "./Migrator.ts"

/**
 * A new embedded database starts from an image when one is given: the files of a database made once (by
 * `npm install` or the first `npm start` after a migration changed, see scripts/start.mjs), with every
 * migration of every schema applied and nothing else in it: no row but the migrations' own bookkeeping, no
 * secret (secrets live in files of their own under DATA_DIR, generated per data directory). Copying it is
 * a fraction of a second, where creating a database and migrating it takes seconds. The migrations still
 * run on every start; on a database from the image they find everything applied.
 */
export interface EmbeddedImage {
  /** The image's directory: its database files under `pglite/`, what it holds in `image.json`. */
  readonly dir: string
  /** The schemas this code migrates. An image made for any other list of migrations is not used. */
  readonly schemas: ReadonlyArray<ImageSchema>
}

/** Copying or writing an image's files failed. */
export class EmbeddedImageFailed extends Schema.TaggedError<EmbeddedImageFailed>()("EmbeddedImageFailed", {
  message: Schema.String,
  cause: Schema.Defect()
}) {}

export interface ImageSchema {
  readonly schema: string
  readonly migrations: ReadonlyArray<Migration>
}

const Manifest = Schema.Struct({
  format: Schema.Literal(1),
  schemas: Schema.Array(
    Schema.Struct({
      schema: Schema.String,
      migrations: Schema.Array(Schema.Struct({ id: Schema.Number, name: Schema.String }))
    })
  )
})
type Manifest = typeof Manifest.Type

export const manifestName = "image.json"
export const databaseName = "pglite"

/** What an image made for these schemas lists: each schema's migrations, by id, schemas by name. */
export const manifestOf = (schemas: ReadonlyArray<ImageSchema>): Manifest => ({
  format: 1,
  schemas: [...schemas]
    .sort((a, b) => (a.schema < b.schema ? -1 : a.schema > b.schema ? 1 : 0))
    .map(({ schema, migrations }) => ({
      schema,
      migrations: [...migrations].sort((a, b) => a.id - b.id).map(({ id, name }) => ({ id, name }))
    }))
})

export const readManifest = (dir: string): Manifest | undefined => {
  try {
    return Schema.decodeUnknownSync(Manifest)(JSON.parse(readFileSync(Path.join(dir, manifestName), "utf8")))
  } catch {
    return undefined
  }
}

/** Folders and regular files only, without following links. */
const copyTree = (from: string, to: string) => {
  mkdirSync(to, { mode: 0o700 })
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (entry.isDirectory()) copyTree(Path.join(from, entry.name), Path.join(to, entry.name))
    else if (entry.isFile()) copyFileSync(Path.join(from, entry.name), Path.join(to, entry.name))
  }
}

/** Why an image is not used, or undefined when it fits these schemas. */
export const imageMismatch = (image: EmbeddedImage): string | undefined => {
  const manifest = readManifest(image.dir)
  if (manifest === undefined || !existsSync(Path.join(image.dir, databaseName, "PG_VERSION"))) {
    return "there is no complete image there"
  }
  if (JSON.stringify(manifest) !== JSON.stringify(manifestOf(image.schemas))) {
    return "it was made for other migrations"
  }
  return undefined
}

/**
 * Puts a copy of the image at `databaseDir` when nothing is there yet and the image was made for exactly the
 * migrations of `image.schemas`; answers whether it did. Copied next to its place, then renamed into it, so
 * a crash in the middle leaves no half database. Anything in the way (an image that does not fit, a failed
 * copy) leaves `databaseDir` absent: the database is then created and migrated as without an image. The
 * caller holds the data directory's lock, and the directory is this account's only, so no one else sees
 * the copy while its modes are still the image's.
 */
export const seedFromImage = (image: EmbeddedImage, databaseDir: string): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    if (existsSync(databaseDir)) return false
    const mismatch = imageMismatch(image)
    if (mismatch !== undefined) {
      yield* Effect.logInfo(
        `embedded database: created and migrated (the image at ${image.dir} is not used: ${mismatch})`
      )
      return false
    }
    const partial = `${databaseDir}.from-image`
    return yield* Effect.try({
      try: () => {
        rmSync(partial, { recursive: true, force: true })
        copyTree(Path.join(image.dir, databaseName), partial)
        renameSync(partial, databaseDir)
        return true
      },
      catch: (cause) => new EmbeddedImageFailed({ message: "the image could not be copied", cause })
    }).pipe(
      Effect.tap(() => Effect.logInfo(`embedded database: new, copied from the image at ${image.dir}`)),
      Effect.catch((cause) =>
        Effect.sync(() => rmSync(partial, { recursive: true, force: true })).pipe(
          Effect.andThen(
            Effect.logWarning("embedded database: the image could not be copied; creating it instead", cause)
          ),
          Effect.as(false)
        )
      )
    )
  })
