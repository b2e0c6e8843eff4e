import { Schema } from "effect"
import { type SqlClient, SqlSchema, type Statement } from "effect/sql"

/** What one table's claim leases, in that table's own columns. */
export interface LeaseClaim {
  /** The table, e.g. sql`hub.mail_outbox`. */
  readonly table: Statement.Fragment
  /** The key columns that pick a row (`id` unless given, e.g. sql`service, id`). */
  readonly key?: Statement.Fragment
  /** What a claim writes on the rows it takes: at least their lease. */
  readonly set: Statement.Fragment
  /** Which rows are due. */
  readonly due: Statement.Fragment
  /** Which of the due rows go first. */
  readonly order: Statement.Fragment
  readonly limit: number
  /** The columns given back for the claimed rows. */
  readonly returning: Statement.Fragment
}

/**
 * The claim of due rows, one UPDATE over rows locked with SKIP LOCKED, so workers on several servers never
 * claim the same row. The due conditions stand in the locking SELECT itself: Postgres rechecks only that
 * SELECT's own conditions on a row another worker claimed (and committed) after this statement's snapshot.
 */
export const claimLeased = (sql: SqlClient.SqlClient, claim: LeaseClaim) => {
  const key = claim.key ?? sql`id`
  return sql`
    UPDATE ${claim.table} SET ${claim.set}
    WHERE (${key}) IN (
      SELECT ${key} FROM ${claim.table}
      WHERE ${claim.due}
      ORDER BY ${claim.order}
      LIMIT ${claim.limit}
      FOR UPDATE SKIP LOCKED)
    RETURNING ${claim.returning}`
}

/** When a claim happens, until when its lease holds, and how many rows it takes at most (ISO times). */
const LeaseRequest = Schema.Struct({ now: Schema.String, leaseUntil: Schema.String, limit: Schema.Int })
export type LeaseRequest = typeof LeaseRequest.Type

/** A table's claim as a query whose rows `Row` decodes: `claim` says, for a request, what to lease. */
export const leaseClaims = <Row extends Schema.Constraint>(
  sql: SqlClient.SqlClient,
  Row: Row,
  claim: (request: LeaseRequest) => Omit<LeaseClaim, "limit">
) =>
  SqlSchema.findAll({
    Request: LeaseRequest,
    Result: Row,
    execute: (request) => claimLeased(sql, { ...claim(request), limit: request.limit })
  })
