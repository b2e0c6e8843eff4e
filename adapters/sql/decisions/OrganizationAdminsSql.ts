import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { OrganizationAdmins } from "../../../core/decisions/OrganizationAdmins.ts"
import { normalizeEmail } from "../../../core/kernel/Email.ts"
import { epochMs } from "../../../core/kernel/Timestamp.ts"

const AdminRow = Schema.Struct({ email: Schema.String })

/** A person's standing is written again at most this often while it stays the same. */
const rewriteAfterMs = 60 * 60_000

/**
 * The OrganizationAdmins port over `decisions.organization_admins` (0008_events.ts). Every workspace request
 * notes its user, so each process remembers what it last wrote for whom and writes only a change, or the
 * same standing again after an hour: the table stays the truth (any server may answer `list`), the memory
 * only spares writes. SQL failures are defects.
 */
export const OrganizationAdminsSql: Layer.Layer<OrganizationAdmins, never, SqlClient.SqlClient> = Layer.effect(
  OrganizationAdmins,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const written = new Map<string, { readonly isAdmin: boolean; readonly atMs: number }>()
    const listRows = SqlSchema.findAll({
      Request: Schema.String,
      Result: AdminRow,
      execute: (organizationId) => sql`
        SELECT email FROM decisions.organization_admins WHERE organization_id = ${organizationId} ORDER BY email`
    })
    return OrganizationAdmins.of({
      note: Effect.fn("OrganizationAdminsSql.note")(function* (
        organizationId: string,
        email: string,
        isAdmin: boolean,
        atIso: string
      ) {
        const normalized = normalizeEmail(email)
        const key = `${organizationId}\u0000${normalized}`
        const atMs = epochMs(atIso)
        const last = written.get(key)
        if (last !== undefined && last.isAdmin === isAdmin && atMs - last.atMs < rewriteAfterMs) return
        if (isAdmin) {
          yield* sql`
            INSERT INTO decisions.organization_admins (organization_id, email, seen_at)
            VALUES (${organizationId}, ${normalized}, ${atIso}::timestamptz)
            ON CONFLICT (organization_id, email) DO UPDATE SET seen_at = excluded.seen_at`
        } else {
          yield* sql`
            DELETE FROM decisions.organization_admins WHERE organization_id = ${organizationId} AND email = ${normalized}`
        }
        if (written.size > 10_000) written.clear()
        written.set(key, { isAdmin, atMs })
      }, Effect.orDie),
      list: Effect.fn("OrganizationAdminsSql.list")(function* (organizationId: string) {
        return (yield* listRows(organizationId)).map((row) => row.email)
      }, Effect.orDie)
    })
  })
)
