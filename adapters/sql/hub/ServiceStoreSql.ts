import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { ServiceStatuses, ServiceStore, type StoredService } from "../../../core/hub/ServiceStore.ts"

const ConformanceCheck = Schema.Struct({
  name: Schema.String,
  passed: Schema.Boolean,
  detail: Schema.optionalKey(Schema.String)
})

const RegisteredServiceDoc = Schema.Struct({
  id: Schema.String,
  displayName: Schema.String,
  baseUrl: Schema.String,
  status: Schema.Literals(ServiceStatuses),
  apiKeyHeader: Schema.String,
  resourcePath: Schema.String,
  firstParty: Schema.Boolean,
  pages: Schema.optionalKey(Schema.Boolean),
  embedUrl: Schema.optionalKey(Schema.String),
  appUrl: Schema.optionalKey(Schema.String),
  consumesFacts: Schema.optionalKey(Schema.Array(Schema.String)),
  createdAt: Schema.String,
  updatedAt: Schema.String,
  version: Schema.Number,
  conformance: Schema.NullOr(
    Schema.Struct({ ranAt: Schema.String, passed: Schema.Boolean, checks: Schema.Array(ConformanceCheck) })
  )
})

const Row = Schema.Struct({
  doc: RegisteredServiceDoc,
  sealed_api_key: Schema.String,
  sealed_signing_key: Schema.String,
  sealed_embed_key: Schema.String
})

const toStored = (row: typeof Row.Type): StoredService => ({
  service: row.doc,
  credentials: { apiKey: row.sealed_api_key, signingKey: row.sealed_signing_key, embedKey: row.sealed_embed_key }
})

/**
 * The ServiceStore port over `hub.services` (0003_registry.ts). The id is the primary key, so two racing
 * registrations of one id cannot both succeed; `save` is one UPDATE conditioned on the stored version.
 * Failures of SQL or of decoding our own rows are defects.
 */
export const ServiceStoreSql: Layer.Layer<ServiceStore, never, SqlClient.SqlClient> = Layer.effect(
  ServiceStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const find = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Row,
      execute: (id) =>
        sql`SELECT doc, sealed_api_key, sealed_signing_key, sealed_embed_key FROM hub.services WHERE id = ${id}`
    })
    const list = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ doc: RegisteredServiceDoc }),
      execute: () => sql`SELECT doc FROM hub.services ORDER BY id`
    })

    return ServiceStore.of({
      create: ({ service, credentials }) =>
        sql`INSERT INTO hub.services (id, version, doc, sealed_api_key, sealed_signing_key, sealed_embed_key)
          VALUES (${service.id}, ${service.version}, ${JSON.stringify(service)}::jsonb, ${credentials.apiKey},
            ${credentials.signingKey}, ${credentials.embedKey})
          ON CONFLICT (id) DO NOTHING RETURNING id`.pipe(
          Effect.map((rows) => (rows.length === 1 ? ("created" as const) : ("taken" as const))),
          Effect.orDie
        ),
      find: (id) =>
        find(id).pipe(
          Effect.map((row) => Option.getOrUndefined(Option.map(row, toStored))),
          Effect.orDie
        ),
      list: () =>
        list(undefined).pipe(
          Effect.map((rows) => rows.map((row) => row.doc)),
          Effect.orDie
        ),
      save: ({ service, credentials }, expectedVersion) =>
        sql`UPDATE hub.services SET version = ${service.version}, doc = ${JSON.stringify(service)}::jsonb,
            sealed_api_key = ${credentials.apiKey}, sealed_signing_key = ${credentials.signingKey},
            sealed_embed_key = ${credentials.embedKey}
          WHERE id = ${service.id} AND version = ${expectedVersion} RETURNING id`.pipe(
          Effect.map((rows) => rows.length === 1),
          Effect.orDie
        )
    })
  })
)
