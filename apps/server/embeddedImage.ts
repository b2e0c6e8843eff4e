/**
 * `node embedded-image.mjs <dir>` (bundled by scripts/start.mjs): makes the embedded database image a new
 * DATA_DIR starts from, at `<dir>`, with every migration of the bundled server applied and nothing else.
 * Exits non-zero when it could not; a server then creates and migrates a new database itself.
 */
import { Effect, Logger, References } from "effect"
import { buildEmbeddedImage } from "../../adapters/sql/EmbeddedImageBuilder.ts"
import { embeddedSchemas } from "./EmbeddedSchemas.ts"

const target = process.argv[2]
if (target === undefined || target === "") {
  process.stderr.write("usage: embedded-image <dir>\n")
  process.exit(2)
}
process.umask(0o077)

await Effect.runPromise(
  buildEmbeddedImage({ target, schemas: embeddedSchemas }).pipe(
    Effect.provide(Logger.layer([Logger.consolePretty()])),
    Effect.provideService(References.MinimumLogLevel, "Warn")
  )
).catch((error: unknown) => {
  process.stderr.write(
    `the embedded database image was not made: ${error instanceof Error ? error.message : String(error)}\n`
  )
  process.exitCode = 1
})
