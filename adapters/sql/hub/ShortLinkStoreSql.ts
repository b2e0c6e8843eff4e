import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { ShortLinkStore } from "../../../core/hub/ShortLinks.ts"

const Row = Schema.Struct({ url: Schema.String })

/** The ShortLinkStore port over `hub.short_links` (0014_short_links.ts). SQL failures are defects. */
export const ShortLinkStoreSql: Layer.Layer<ShortLinkStore, never, SqlClient.SqlClient> = Layer.effect(
  ShortLinkStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const byCode = SqlSchema.findAll({
      Request: Schema.String,
      Result: Row,
      execute: (code) => sql`SELECT url FROM hub.short_links WHERE code = ${code}`
    })
    return ShortLinkStore.of({
      // One statement: the row is written unless the code is taken, and the code's address is answered either way.
      put: (link) =>
        sql<{ readonly url: string }>`
          WITH written AS (
            INSERT INTO hub.short_links (code, url, created_at)
            VALUES (${link.code}, ${link.url}, ${link.createdAt}::timestamptz)
            ON CONFLICT (code) DO NOTHING
            RETURNING url
          )
          SELECT url FROM written UNION ALL SELECT url FROM hub.short_links WHERE code = ${link.code}`.pipe(
          Effect.map((rows) => rows[0]?.url ?? link.url),
          Effect.orDie
        ),
      find: (code) =>
        byCode(code).pipe(
          Effect.map((rows) => rows[0]?.url),
          Effect.orDie
        )
    })
  })
)
