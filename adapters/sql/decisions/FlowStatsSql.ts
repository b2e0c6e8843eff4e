import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema, type Statement } from "effect/sql"
import { escalationActor, FlowStatsStore, type FlowWindow } from "../../../core/decisions/FlowStats.ts"

const Window = Schema.Struct({
  organizationId: Schema.String,
  fromIso: Schema.String,
  toIso: Schema.String,
  nowIso: Schema.String,
  oldestLimit: Schema.Int
})

const DayRow = Schema.Struct({ day: Schema.String, kind: Schema.String, n: Schema.Number })
const TimeRow = Schema.Struct({
  grouped_by: Schema.Literals(["role", "template"]),
  key: Schema.String,
  decided: Schema.Number,
  median_ms: Schema.Number,
  p90_ms: Schema.Number
})
const WaitingRow = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  role_slug: Schema.String,
  status: Schema.Literals(["pending", "needs_info"]),
  created_at: Schema.String
})

/**
 * The flow of decisions (core/decisions/FlowStats.ts) computed in SQL over `decisions.decisions`, one
 * organization's rows only: three statements (counts per day and kind, `percentile_cont` of the time to
 * decide grouped by role and by template, the oldest open decisions). Definitions match the memory store's
 * (core/decisions/FlowRules.ts): an open decision past its expiry counts as expired at its expiry, swept or
 * not; times to decide are those of the decisions resolved in the window, from creation to resolution.
 */
export const FlowStatsSql: Layer.Layer<FlowStatsStore, never, SqlClient.SqlClient> = Layer.effect(
  FlowStatsStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** The instant a resolved or expired decision was decided, as its document records it. */
    const decidedAt = sql`(doc->'resolution'->>'decidedAt')::timestamptz`

    /**
     * The escalations of the organization's decisions as `(id, at)` rows (core/decisions/FlowStats.ts): the
     * steps of a decision's escalation ladder that ran and did something, and the assignment changes made by
     * an escalation step's route. The one query that says where escalations are read.
     */
    const escalationEvents = (organizationId: string): Statement.Fragment => sql`
      SELECT d.id, (step->>'ranAt')::timestamptz AS at
      FROM decisions.decisions d
        CROSS JOIN LATERAL jsonb_array_elements(COALESCE(d.doc->'escalation', '[]'::jsonb)) AS step
      WHERE d.organization_id = ${organizationId} AND step->>'ranAt' IS NOT NULL AND step->>'outcome' = 'done'
      UNION ALL
      SELECT d.id, (h->>'at')::timestamptz AS at
      FROM decisions.decisions d CROSS JOIN LATERAL jsonb_array_elements(d.doc->'assignmentHistory') AS h
      WHERE d.organization_id = ${organizationId} AND h->>'actor' = ${escalationActor}`

    const dayRows = SqlSchema.findAll({
      Request: Window,
      Result: DayRow,
      execute: (w) => sql`
        WITH mine AS (
          SELECT id, status, created_at, expires_at, doc FROM decisions.decisions
          WHERE organization_id = ${w.organizationId}
        ), events AS (
          SELECT 'created' AS kind, id, created_at AS at FROM mine
          UNION ALL
          SELECT 'resolved', id, ${decidedAt} FROM mine WHERE status = 'resolved'
          UNION ALL
          SELECT 'expired', id, COALESCE(${decidedAt}, expires_at) FROM mine
          WHERE status = 'expired'
            OR (status IN ('pending', 'needs_info') AND expires_at <= ${w.nowIso}::timestamptz)
          UNION ALL
          SELECT 'escalated', id, at FROM (${escalationEvents(w.organizationId)}) AS escalations
        )
        SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, kind, count(DISTINCT id)::int AS n
        FROM events
        WHERE at >= ${w.fromIso}::timestamptz AND at < ${w.toIso}::timestamptz
        GROUP BY 1, 2`
    })

    const timeRows = SqlSchema.findAll({
      Request: Window,
      Result: TimeRow,
      execute: (w) => sql`
        WITH decided AS (
          SELECT role_slug, doc->>'templateSlug' AS template_slug,
            (extract(epoch FROM ${decidedAt} - created_at) * 1000)::float8 AS ms
          FROM decisions.decisions
          WHERE organization_id = ${w.organizationId} AND status = 'resolved'
            AND ${decidedAt} >= ${w.fromIso}::timestamptz AND ${decidedAt} < ${w.toIso}::timestamptz
        )
        SELECT CASE WHEN grouping(role_slug) = 0 THEN 'role' ELSE 'template' END AS grouped_by,
          COALESCE(role_slug, template_slug) AS key,
          count(*)::int AS decided,
          percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS median_ms,
          percentile_cont(0.9) WITHIN GROUP (ORDER BY ms) AS p90_ms
        FROM decided
        GROUP BY GROUPING SETS ((role_slug), (template_slug))
        HAVING grouping(role_slug) = 0 OR template_slug IS NOT NULL`
    })

    const waitingRows = SqlSchema.findAll({
      Request: Window,
      Result: WaitingRow,
      execute: (w) => sql`
        SELECT d.id, d.doc->>'title' AS title, d.role_slug, d.status, d.doc->>'createdAt' AS created_at
        FROM decisions.decisions d
        WHERE d.organization_id = ${w.organizationId} AND d.status IN ('pending', 'needs_info')
          AND (d.expires_at IS NULL OR d.expires_at > ${w.nowIso}::timestamptz)
        ORDER BY d.created_at, d.id
        LIMIT ${w.oldestLimit}`
    })

    return FlowStatsStore.of({
      read: Effect.fn("FlowStatsSql.read")(function* (window: FlowWindow) {
        const [counted, timed, waiting] = yield* Effect.all([dayRows(window), timeRows(window), waitingRows(window)])
        const days = new Map<string, { created: number; resolved: number; expired: number; escalated: number }>()
        for (const row of counted) {
          const day = days.get(row.day) ?? { created: 0, resolved: 0, expired: 0, escalated: 0 }
          if (row.kind === "created" || row.kind === "resolved" || row.kind === "expired" || row.kind === "escalated")
            day[row.kind] = row.n
          days.set(row.day, day)
        }
        const byKind = (by: "role" | "template") =>
          timed
            .filter((row) => row.grouped_by === by)
            .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
            .map((row) => ({ key: row.key, decided: row.decided, medianMs: row.median_ms, p90Ms: row.p90_ms }))
        return {
          days: [...days.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([day, counts]) => ({ day, ...counts })),
          byRole: byKind("role"),
          byTemplate: byKind("template"),
          oldestWaiting: waiting.map((row) => ({
            id: row.id,
            title: row.title,
            roleSlug: row.role_slug,
            status: row.status,
            createdAt: row.created_at
          }))
        }
      }, Effect.orDie)
    })
  })
)
