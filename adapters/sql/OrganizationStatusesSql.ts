import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { OrganizationStatuses, type OrganizationStatusNotice } from "../../core/events/OrganizationStatuses.ts"
import { normalizeEmail } from "../../core/kernel/Email.ts"
import { makeCredentialCache } from "./CredentialCache.ts"
import { CredentialNoticesSql } from "./CredentialNotices.ts"

/** An answer the caches keep: every answer is kept, so a caller whose organization never changed costs no read. */
interface Standing {
  readonly id: string
  readonly suspended: boolean
}

const SuspendedRow = Schema.Struct({ suspended: Schema.NullOr(Schema.Boolean) })

/**
 * The OrganizationStatuses port over `<schema>.organization_statuses` and `<schema>.organization_members`
 * (platform/0002_organization_statuses.ts). A fact older than the status kept leaves the status as it is.
 *
 * The reads sit on every authenticated request, so each instance keeps their answers (CredentialCache.ts):
 * `record` announces the organization and the person it names inside the writer's unit, and every instance
 * drops those answers when the unit commits. The person's answer depends on their organizations' statuses:
 * each member is named by a fact of their own, so each member's answer is dropped when theirs is recorded.
 */
export const OrganizationStatusesSql = (
  schema: string
): Layer.Layer<OrganizationStatuses, never, SqlClient.SqlClient> =>
  Layer.effect(
    OrganizationStatuses,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const statuses = sql`${sql(schema)}.organization_statuses`
      const members = sql`${sql(schema)}.organization_members`
      const organizations = yield* makeCredentialCache<Standing>({
        scope: `${schema}.organization_statuses`,
        idOf: (standing) => standing.id
      })
      const people = yield* makeCredentialCache<Standing>({
        scope: `${schema}.organization_members`,
        idOf: (standing) => standing.id
      })
      const organizationRow = SqlSchema.findOneOption({
        Request: Schema.String,
        Result: SuspendedRow,
        execute: (organizationId) =>
          sql`SELECT status <> 'active' AS suspended FROM ${statuses} WHERE organization_id = ${organizationId}`
      })
      // Null when the person was never heard of: not suspended.
      const personRow = SqlSchema.findOneOption({
        Request: Schema.String,
        Result: SuspendedRow,
        execute: (email) => sql`
          SELECT bool_and(coalesce(s.status <> 'active', false)) AS suspended
          FROM ${members} AS m LEFT JOIN ${statuses} AS s ON s.organization_id = m.organization_id
          WHERE m.email = ${email}`
      })
      const suspended = (row: Option.Option<typeof SuspendedRow.Type>) =>
        Option.match(row, { onNone: () => false, onSome: (r) => r.suspended === true })

      return OrganizationStatuses.of({
        record: Effect.fn("OrganizationStatusesSql.record")(function* (notice: OrganizationStatusNotice) {
          const email = normalizeEmail(notice.email)
          yield* sql`
            INSERT INTO ${statuses} AS s (organization_id, status, changed_at)
            VALUES (${notice.organizationId}, ${notice.status}, ${notice.changedAt}::timestamptz)
            ON CONFLICT (organization_id) DO UPDATE SET status = excluded.status, changed_at = excluded.changed_at
            WHERE s.changed_at <= excluded.changed_at`
          yield* sql`
            INSERT INTO ${members} (email, organization_id) VALUES (${email}, ${notice.organizationId})
            ON CONFLICT DO NOTHING`
          yield* organizations.changed(notice.organizationId)
          yield* people.changed(email)
        }, Effect.orDie),
        organizationSuspended: (organizationId) =>
          Effect.map(
            organizations.get(
              organizationId,
              Effect.map(organizationRow(organizationId), (row) => ({ id: organizationId, suspended: suspended(row) }))
            ),
            (standing) => standing?.suspended === true
          ).pipe(Effect.orDie),
        personSuspended: (email) => {
          const normalized = normalizeEmail(email)
          return Effect.map(
            people.get(
              normalized,
              Effect.map(personRow(normalized), (row) => ({ id: normalized, suspended: suspended(row) }))
            ),
            (standing) => standing?.suspended === true
          ).pipe(Effect.orDie)
        }
      })
    })
  ).pipe(Layer.provide(CredentialNoticesSql))
