import { Array as Arr, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { Decision, DecisionStatus } from "../../../core/decisions/Decision.ts"
import { actionsDueAt, hasWaitingAction } from "../../../core/decisions/DecisionAction.ts"
import { DecisionStore, type DecisionQuery } from "../../../core/decisions/DecisionStore.ts"
import { escalationDueAt } from "../../../core/decisions/Escalation.ts"
import type { WebhookDelivery } from "../../../core/decisions/WebhookOutbox.ts"
import { normalizeEmail } from "../../../core/kernel/Email.ts"
import { epochMs, isoAt } from "../../../core/kernel/Timestamp.ts"
import { writeBehind } from "../units/HeldWrites.ts"

const Row = Schema.Struct({ doc: Decision })

const Key = Schema.Struct({ organizationId: Schema.String, id: Schema.String })

const Query = Schema.Struct({
  organizationId: Schema.String,
  scope: Schema.Union([
    Schema.TaggedStruct("All", {}),
    Schema.TaggedStruct("Inbox", { email: Schema.String, roleSlugs: Schema.Array(Schema.String) }),
    Schema.TaggedStruct("Unrouted", { routableRoleSlugs: Schema.Array(Schema.String) })
  ]),
  statuses: Schema.optional(Schema.Array(DecisionStatus)),
  nowIso: Schema.String,
  afterId: Schema.optional(Schema.String),
  limit: Schema.Int
})

const Due = Schema.Struct({ nowIso: Schema.String, limit: Schema.Int })

const Save = Schema.Struct({ next: Decision, expectedVersion: Schema.Int })

/**
 * An instant as `Date.parse` reads it, to the millisecond, so SQL compares times exactly as the memory adapter
 * and `settle` do. A string that is no date is no instant: such an expiry never comes, as in memory.
 */
const instant = (iso: string): string | null => {
  const ms = epochMs(iso)
  return Number.isFinite(ms) ? isoAt(ms) : null
}

/** The scalar columns, always rewritten from the decision itself (0002_decisions.ts, 0007_actions_and_outbox.ts). */
const columns = (decision: Decision) => {
  const actionDueAt = actionsDueAt(decision.actions)
  const escalationAt = escalationDueAt(decision)
  return {
    roleSlug: decision.roleSlug,
    status: decision.status,
    directAssigneeEmail:
      decision.directAssigneeEmail === undefined ? null : normalizeEmail(decision.directAssigneeEmail),
    expiresAt: decision.expiresAt === undefined ? null : instant(decision.expiresAt),
    createdAt: instant(decision.createdAt),
    actionDueAt: actionDueAt === undefined ? null : isoAt(actionDueAt),
    actionsWaiting: hasWaitingAction(decision.actions),
    escalationDueAt: escalationAt === undefined ? null : isoAt(escalationAt),
    doc: JSON.stringify(decision)
  }
}

/**
 * The DecisionStore port over `decisions.decisions` (0002_decisions.ts). `save` is one conditional UPDATE,
 * so of concurrent saves from one version exactly one changes the row. Lists see statuses as a reader does
 * at `nowIso` (an open decision past its expiry counts as expired), in SQL, before paging. SQL failures and
 * rows that do not decode are defects.
 */
export const DecisionStoreSql: Layer.Layer<DecisionStore, never, SqlClient.SqlClient> = Layer.effect(
  DecisionStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    // A new decision comes from the use case, already well-formed: it is written without encoding it again.
    const insertRow = (decision: Decision) => {
      const c = columns(decision)
      return sql`
          INSERT INTO decisions.decisions
            (id, organization_id, role_slug, status, direct_assignee_email, expires_at, created_at, version,
              action_due_at, actions_waiting, escalation_due_at, doc)
          VALUES (${decision.id}, ${decision.organizationId}, ${c.roleSlug}, ${c.status}, ${c.directAssigneeEmail},
            ${c.expiresAt}::timestamptz, ${c.createdAt}::timestamptz, ${decision.version},
            ${c.actionDueAt}::timestamptz, ${c.actionsWaiting}, ${c.escalationDueAt}::timestamptz, ${c.doc}::jsonb)`
    }

    const findRow = SqlSchema.findOneOption({
      Request: Key,
      Result: Row,
      execute: (key) => sql`
        SELECT doc FROM decisions.decisions WHERE id = ${key.id} AND organization_id = ${key.organizationId}`
    })

    const updateRow = SqlSchema.findAll({
      Request: Save,
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ next, expectedVersion }) => {
        const c = columns(next)
        return sql`
          UPDATE decisions.decisions SET
            role_slug = ${c.roleSlug},
            status = ${c.status},
            direct_assignee_email = ${c.directAssigneeEmail},
            expires_at = ${c.expiresAt}::timestamptz,
            created_at = ${c.createdAt}::timestamptz,
            version = ${next.version},
            action_due_at = ${c.actionDueAt}::timestamptz,
            actions_waiting = ${c.actionsWaiting},
            escalation_due_at = ${c.escalationDueAt}::timestamptz,
            doc = ${c.doc}::jsonb
          WHERE id = ${next.id} AND organization_id = ${next.organizationId} AND version = ${expectedVersion}
          RETURNING id`
      }
    })

    const listRows = SqlSchema.findAll({
      Request: Query,
      Result: Row,
      execute: (query) => {
        const now = instant(query.nowIso)
        // An open decision whose time has come reads as expired (DecisionMachine `settle`).
        const effectiveStatus = sql`CASE WHEN status IN ('pending', 'needs_info') AND expires_at <= ${now}::timestamptz
          THEN 'expired' ELSE status END`
        const scope = query.scope
        const conditions = [sql`organization_id = ${query.organizationId}`]
        if (query.afterId !== undefined) conditions.push(sql`id < ${query.afterId}`)
        if (query.statuses !== undefined) conditions.push(sql`${effectiveStatus} = ANY(${query.statuses}::text[])`)
        switch (scope._tag) {
          case "All":
            break
          case "Inbox":
            conditions.push(
              sql`(role_slug = ANY(${scope.roleSlugs}::text[]) OR direct_assignee_email = ${normalizeEmail(scope.email)})`
            )
            break
          case "Unrouted":
            conditions.push(
              sql`${effectiveStatus} IN ('pending', 'needs_info')`,
              sql`direct_assignee_email IS NULL`,
              sql`role_slug <> ALL(${scope.routableRoleSlugs}::text[])`
            )
            break
        }
        return sql`SELECT doc FROM decisions.decisions WHERE ${sql.and(conditions)} ORDER BY id DESC LIMIT ${query.limit}`
      }
    })

    const dueRows = SqlSchema.findAll({
      Request: Due,
      Result: Row,
      execute: ({ nowIso, limit }) => sql`
        SELECT doc FROM decisions.decisions
        WHERE status IN ('pending', 'needs_info') AND expires_at <= ${instant(nowIso)}::timestamptz
        ORDER BY expires_at, id
        LIMIT ${limit}`
    })

    const actionsDueRows = SqlSchema.findAll({
      Request: Due,
      Result: Row,
      execute: ({ nowIso, limit }) => sql`
        SELECT doc FROM decisions.decisions
        WHERE action_due_at <= ${instant(nowIso)}::timestamptz
        ORDER BY action_due_at, id
        LIMIT ${limit}`
    })

    // Held until the unit of work ends; rows another unit holds are passed over (core/decisions/Escalations.ts).
    const escalationRow = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Row,
      execute: (nowIso) => sql`
        SELECT doc FROM decisions.decisions
        WHERE escalation_due_at <= ${instant(nowIso)}::timestamptz
          AND (expires_at IS NULL OR expires_at > ${instant(nowIso)}::timestamptz)
        ORDER BY escalation_due_at, id
        LIMIT 1
        FOR UPDATE SKIP LOCKED`
    })

    const actionsWaitingRows = SqlSchema.findAll({
      Request: Schema.String,
      Result: Row,
      execute: (organizationId) => sql`
        SELECT doc FROM decisions.decisions WHERE organization_id = ${organizationId} AND actions_waiting ORDER BY id`
    })

    const insertDeliveries = (deliveries: Arr.NonEmptyReadonlyArray<WebhookDelivery>) =>
      sql`INSERT INTO decisions.webhook_deliveries ${sql.insert(
        Arr.map(deliveries, (d) => ({
          id: d.id,
          organization_id: d.organizationId,
          webhook_id: d.webhookId,
          decision_id: d.decisionId,
          event_type: d.eventType,
          payload: d.payload,
          status: d.status,
          attempts: d.attempts,
          next_attempt_at: d.nextAttemptAt,
          created_at: d.createdAt
        }))
      )}`

    const docs = (rows: ReadonlyArray<typeof Row.Type>): ReadonlyArray<Decision> => rows.map((row) => row.doc)

    return DecisionStore.of({
      // On every decision creation: untraced (its statement has a span of its own). Inside a unit the new row
      // goes with the unit's last statement: the unit that creates a decision does not read it back.
      insert: Effect.fnUntraced(function* (decision: Decision) {
        yield* writeBehind(sql, insertRow(decision))
      }, Effect.orDie),
      get: Effect.fn("DecisionStoreSql.get")(function* (organizationId: string, id: string) {
        return Option.getOrUndefined(yield* findRow({ organizationId, id }))?.doc
      }, Effect.orDie),
      save: Effect.fn("DecisionStoreSql.save")(function* (
        next: Decision,
        expectedVersion: number,
        outbox: ReadonlyArray<WebhookDelivery> = []
      ) {
        if (!Arr.isReadonlyArrayNonEmpty(outbox)) return (yield* updateRow({ next, expectedVersion })).length > 0
        // The change and its webhook deliveries commit together or not at all.
        return yield* sql.withTransaction(
          Effect.gen(function* () {
            if ((yield* updateRow({ next, expectedVersion })).length === 0) return false
            yield* insertDeliveries(outbox)
            return true
          })
        )
      }, Effect.orDie),
      list: Effect.fn("DecisionStoreSql.list")(function* (query: DecisionQuery) {
        return docs(yield* listRows(query))
      }, Effect.orDie),
      due: Effect.fn("DecisionStoreSql.due")(function* (nowIso: string, limit: number) {
        return docs(yield* dueRows({ nowIso, limit }))
      }, Effect.orDie),
      actionsDue: Effect.fn("DecisionStoreSql.actionsDue")(function* (nowIso: string, limit: number) {
        return docs(yield* actionsDueRows({ nowIso, limit }))
      }, Effect.orDie),
      claimEscalation: Effect.fn("DecisionStoreSql.claimEscalation")(function* (nowIso: string) {
        return Option.getOrUndefined(yield* escalationRow(nowIso))?.doc
      }, Effect.orDie),
      actionsWaiting: Effect.fn("DecisionStoreSql.actionsWaiting")(function* (organizationId: string) {
        return docs(yield* actionsWaitingRows(organizationId))
      }, Effect.orDie)
    })
  })
)
