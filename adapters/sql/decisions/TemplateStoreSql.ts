import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { Template } from "../../../core/decisions/Template.ts"
import { TemplateStore } from "../../../core/decisions/TemplateStore.ts"

const Row = Schema.Struct({ doc: Template })
const Key = Schema.Struct({ organizationId: Schema.String, slug: Schema.String })

/** The TemplateStore port over `decisions.templates` (0005_templates.ts). Failures of SQL or decoding are defects. */
export const TemplateStoreSql: Layer.Layer<TemplateStore, never, SqlClient.SqlClient> = Layer.effect(
  TemplateStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const listRows = SqlSchema.findAll({
      Request: Schema.String,
      Result: Row,
      execute: (organizationId) =>
        sql`SELECT doc FROM decisions.templates WHERE organization_id = ${organizationId} ORDER BY slug`
    })
    const findRow = SqlSchema.findOneOption({
      Request: Key,
      Result: Row,
      execute: ({ organizationId, slug }) =>
        sql`SELECT doc FROM decisions.templates WHERE organization_id = ${organizationId} AND slug = ${slug}`
    })

    return TemplateStore.of({
      list: (organizationId) =>
        listRows(organizationId).pipe(
          Effect.map((rows) => rows.map((row) => row.doc)),
          Effect.orDie
        ),
      get: (organizationId, slug) =>
        findRow({ organizationId, slug }).pipe(
          Effect.map((row) => Option.getOrUndefined(Option.map(row, (r) => r.doc))),
          Effect.orDie
        ),
      create: (organizationId, template) =>
        sql`INSERT INTO decisions.templates (organization_id, slug, doc)
            VALUES (${organizationId}, ${template.slug}, ${JSON.stringify(template)}::jsonb)
            ON CONFLICT (organization_id, slug) DO NOTHING RETURNING slug`.pipe(
          Effect.map((rows) => rows.length === 1),
          Effect.orDie
        ),
      replace: (organizationId, template) =>
        sql`UPDATE decisions.templates SET doc = ${JSON.stringify(template)}::jsonb
            WHERE organization_id = ${organizationId} AND slug = ${template.slug} RETURNING slug`.pipe(
          Effect.map((rows) => rows.length === 1),
          Effect.orDie
        )
    })
  })
)
