import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { CatalogStore, type EventCatalogEntry } from "../../../core/hub/CatalogStore.ts"

const Row = Schema.Struct({
  type: Schema.String,
  producer: Schema.String,
  is_notification: Schema.Boolean,
  data_schema: Schema.Record(Schema.String, Schema.Unknown),
  version: Schema.Number,
  updated_at: Schema.Date
})

const toEntry = (row: typeof Row.Type): EventCatalogEntry => ({
  type: row.type,
  producer: row.producer,
  isNotification: row.is_notification,
  dataSchema: row.data_schema,
  version: row.version,
  updatedAt: row.updated_at.toISOString()
})

/** The CatalogStore port over `hub.event_catalog` (0004_events.ts). SQL failures are defects. */
export const CatalogStoreSql: Layer.Layer<CatalogStore, never, SqlClient.SqlClient> = Layer.effect(
  CatalogStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const upsertRow = SqlSchema.findOne({
      Request: Schema.Struct({
        type: Schema.String,
        producer: Schema.String,
        isNotification: Schema.Boolean,
        dataSchema: Schema.String,
        updatedAt: Schema.String
      }),
      Result: Row,
      execute: (e) => sql`
        INSERT INTO hub.event_catalog (type, producer, is_notification, data_schema, version, updated_at)
        VALUES (${e.type}, ${e.producer}, ${e.isNotification}, ${e.dataSchema}::jsonb, 1, ${e.updatedAt}::timestamptz)
        ON CONFLICT (type) DO UPDATE SET producer = EXCLUDED.producer, is_notification = EXCLUDED.is_notification,
          data_schema = EXCLUDED.data_schema, updated_at = EXCLUDED.updated_at,
          version = hub.event_catalog.version + 1
        RETURNING *`
    })
    const selectRows = SqlSchema.findAll({
      Request: Schema.Struct({ type: Schema.NullOr(Schema.String), producer: Schema.NullOr(Schema.String) }),
      Result: Row,
      execute: ({ type, producer }) => sql`
        SELECT * FROM hub.event_catalog
        WHERE (${type}::text IS NULL OR type = ${type}) AND (${producer}::text IS NULL OR producer = ${producer})
        ORDER BY type`
    })

    return CatalogStore.of({
      upsert: (entry) =>
        upsertRow({ ...entry, dataSchema: JSON.stringify(entry.dataSchema) }).pipe(Effect.map(toEntry), Effect.orDie),
      insertIfAbsent: (entry) =>
        sql<{ readonly type: string }>`
          INSERT INTO hub.event_catalog (type, producer, is_notification, data_schema, version, updated_at)
          VALUES (${entry.type}, ${entry.producer}, ${entry.isNotification}, ${JSON.stringify(entry.dataSchema)}::jsonb,
            1, ${entry.updatedAt}::timestamptz)
          ON CONFLICT (type) DO NOTHING RETURNING type`.pipe(
          Effect.map((rows) => rows.length === 1),
          Effect.orDie
        ),
      find: (type) =>
        selectRows({ type, producer: null }).pipe(
          Effect.map((rows) => (rows[0] === undefined ? undefined : toEntry(rows[0]))),
          Effect.orDie
        ),
      list: (producer) =>
        selectRows({ type: null, producer: producer ?? null }).pipe(
          Effect.map((rows) => rows.map(toEntry)),
          Effect.orDie
        )
    })
  })
)
