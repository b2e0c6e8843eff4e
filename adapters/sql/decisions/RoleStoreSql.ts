import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { Escalation } from "../../../core/decisions/EscalationSchema.ts"
import type { Assignment, Role } from "../../../core/decisions/Role.ts"
import { RoleStore, type NewRole } from "../../../core/decisions/RoleStore.ts"
import { onceInShared } from "../units/GatheredReads.ts"

const RoleRow = Schema.Struct({
  id: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  member_count: Schema.Int,
  created_at: Schema.Date,
  archived_at: Schema.NullOr(Schema.Date),
  escalation: Schema.NullOr(Escalation)
})

const RoleWithHoldersRow = Schema.Struct({ ...RoleRow.fields, holders: Schema.Array(Schema.String) })

const AssignmentRow = Schema.Struct({ member_email: Schema.String, added_by: Schema.String, added_at: Schema.Date })

const RoleKey = Schema.Struct({ organizationId: Schema.String, slug: Schema.String })

const toRole = (row: typeof RoleRow.Type): Role => ({
  id: row.id,
  slug: row.slug,
  name: row.name,
  ...(row.description === null ? {} : { description: row.description }),
  memberCount: row.member_count,
  createdAt: row.created_at.toISOString(),
  ...(row.archived_at === null ? {} : { archivedAt: row.archived_at.toISOString() }),
  ...(row.escalation === null ? {} : { escalation: row.escalation })
})

const toAssignment = (row: typeof AssignmentRow.Type): Assignment => ({
  memberEmail: row.member_email,
  addedBy: row.added_by,
  addedAt: row.added_at.toISOString()
})

/**
 * The RoleStore port over `decisions.roles` and `decisions.role_assignments` (0003_roles.ts). `memberCount`
 * is counted, never stored. Creating a taken slug and assigning a member twice change nothing (ON CONFLICT DO
 * NOTHING): the first role and the first assignment stay. Lists are in slug and email order. SQL failures
 * and rows that do not decode are defects.
 */
export const RoleStoreSql: Layer.Layer<RoleStore, never, SqlClient.SqlClient> = Layer.effect(
  RoleStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    // Every answer about a role (`r`) goes through this projection, so `memberCount` is counted one way.
    const roleColumns = sql`r.id, r.slug, r.name, r.description, r.created_at, r.archived_at, r.escalation,
      (SELECT count(*)::integer FROM decisions.role_assignments a
        WHERE a.organization_id = r.organization_id AND a.slug = r.slug) AS member_count`

    const listRows = SqlSchema.findAll({
      Request: Schema.String,
      Result: RoleRow,
      execute: (organizationId) => sql`
        SELECT ${roleColumns} FROM decisions.roles r WHERE r.organization_id = ${organizationId} ORDER BY r.slug`
    })

    const findRow = SqlSchema.findOneOption({
      Request: RoleKey,
      Result: RoleRow,
      execute: (key) => sql`
        SELECT ${roleColumns} FROM decisions.roles r
        WHERE r.organization_id = ${key.organizationId} AND r.slug = ${key.slug}`
    })

    const insertRow = SqlSchema.findAll({
      Request: Schema.Struct({
        id: Schema.String,
        organizationId: Schema.String,
        slug: Schema.String,
        name: Schema.String,
        description: Schema.optional(Schema.String),
        createdAt: Schema.String,
        escalation: Schema.optional(Escalation)
      }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: (role) => sql`
        INSERT INTO decisions.roles (organization_id, slug, id, name, description, created_at, escalation)
        VALUES (${role.organizationId}, ${role.slug}, ${role.id}, ${role.name}, ${role.description ?? null},
          ${role.createdAt}::timestamptz, ${role.escalation === undefined ? null : JSON.stringify(role.escalation)}::jsonb)
        ON CONFLICT (organization_id, slug) DO NOTHING
        RETURNING id`
    })

    // `description`: absent keeps it, null clears it, a string replaces it.
    const updateRow = SqlSchema.findOneOption({
      Request: Schema.Struct({
        organizationId: Schema.String,
        slug: Schema.String,
        name: Schema.NullOr(Schema.String),
        setDescription: Schema.Boolean,
        description: Schema.NullOr(Schema.String),
        setEscalation: Schema.Boolean,
        escalation: Schema.NullOr(Schema.String)
      }),
      Result: RoleRow,
      execute: (patch) => sql`
        WITH r AS (
          UPDATE decisions.roles SET
            name = coalesce(${patch.name}::text, name),
            description = CASE WHEN ${patch.setDescription}::boolean THEN ${patch.description}::text ELSE description END,
            escalation = CASE WHEN ${patch.setEscalation}::boolean THEN ${patch.escalation}::jsonb ELSE escalation END
          WHERE organization_id = ${patch.organizationId} AND slug = ${patch.slug}
          RETURNING *
        )
        SELECT ${roleColumns} FROM r`
    })

    // The first archive is the one that counts: archiving again keeps its `archivedAt`.
    const archiveRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ organizationId: Schema.String, slug: Schema.String, at: Schema.String }),
      Result: RoleRow,
      execute: (input) => sql`
        WITH r AS (
          UPDATE decisions.roles SET archived_at = coalesce(archived_at, ${input.at}::timestamptz)
          WHERE organization_id = ${input.organizationId} AND slug = ${input.slug}
          RETURNING *
        )
        SELECT ${roleColumns} FROM r`
    })

    // The role and its holders in one statement: a decision's creation reads both on its hot path.
    const findWithHolders = SqlSchema.findOneOption({
      Request: RoleKey,
      Result: RoleWithHoldersRow,
      execute: (key) => sql`
        SELECT ${roleColumns},
          coalesce((SELECT array_agg(a.member_email ORDER BY a.member_email) FROM decisions.role_assignments a
            WHERE a.organization_id = r.organization_id AND a.slug = r.slug), '{}') AS holders
        FROM decisions.roles r
        WHERE r.organization_id = ${key.organizationId} AND r.slug = ${key.slug}`
    })

    const assignmentRows = SqlSchema.findAll({
      Request: RoleKey,
      Result: AssignmentRow,
      execute: (key) => sql`
        SELECT member_email, added_by, added_at FROM decisions.role_assignments
        WHERE organization_id = ${key.organizationId} AND slug = ${key.slug}
        ORDER BY member_email`
    })

    // Assigning to a role that does not exist does nothing, like assigning a member twice.
    const assignRow = SqlSchema.void({
      Request: Schema.Struct({
        organizationId: Schema.String,
        slug: Schema.String,
        memberEmail: Schema.String,
        addedBy: Schema.String,
        addedAt: Schema.String
      }),
      execute: (input) => sql`
        INSERT INTO decisions.role_assignments (organization_id, slug, member_email, added_by, added_at)
        SELECT r.organization_id, r.slug, ${input.memberEmail}, ${input.addedBy}, ${input.addedAt}::timestamptz
        FROM decisions.roles r
        WHERE r.organization_id = ${input.organizationId} AND r.slug = ${input.slug}
        ON CONFLICT (organization_id, slug, member_email) DO NOTHING`
    })

    const unassignRow = SqlSchema.findAll({
      Request: Schema.Struct({ organizationId: Schema.String, slug: Schema.String, email: Schema.String }),
      Result: Schema.Struct({ member_email: Schema.String }),
      // The role's row is locked until the unit of work ends, so removals from one role take turns: a unit
      // that removes a holder and then counts the rest sees every removal committed before it.
      execute: (input) => sql`
        WITH role AS (
          SELECT 1 FROM decisions.roles
          WHERE organization_id = ${input.organizationId} AND slug = ${input.slug}
          FOR UPDATE
        )
        DELETE FROM decisions.role_assignments
        WHERE organization_id = ${input.organizationId} AND slug = ${input.slug} AND member_email = ${input.email}
          AND EXISTS (SELECT 1 FROM role)
        RETURNING member_email`
    })

    const heldRows = SqlSchema.findAll({
      Request: Schema.Struct({ organizationId: Schema.String, email: Schema.String }),
      Result: Schema.Struct({ slug: Schema.String }),
      execute: (input) => sql`
        SELECT r.slug FROM decisions.roles r
        JOIN decisions.role_assignments a ON a.organization_id = r.organization_id AND a.slug = r.slug
        WHERE r.organization_id = ${input.organizationId} AND a.member_email = ${input.email}
          AND r.archived_at IS NULL
        ORDER BY r.slug`
    })

    const orUndefined = Option.match({ onNone: () => undefined, onSome: toRole })

    return RoleStore.of({
      list: Effect.fn("RoleStoreSql.list")(function* (organizationId: string) {
        return (yield* listRows(organizationId)).map(toRole)
      }, Effect.orDie),
      get: Effect.fn("RoleStoreSql.get")(function* (organizationId: string, slug: string) {
        return orUndefined(yield* findRow({ organizationId, slug }))
      }, Effect.orDie),
      create: Effect.fn("RoleStoreSql.create")(function* (role: NewRole) {
        return (yield* insertRow(role)).length > 0
      }, Effect.orDie),
      update: Effect.fn("RoleStoreSql.update")(function* (
        organizationId: string,
        slug: string,
        patch: Parameters<RoleStore["Service"]["update"]>[2]
      ) {
        return orUndefined(
          yield* updateRow({
            organizationId,
            slug,
            name: patch.name ?? null,
            setDescription: patch.description !== undefined,
            description: patch.description ?? null,
            setEscalation: patch.escalation !== undefined,
            escalation: patch.escalation == null ? null : JSON.stringify(patch.escalation)
          })
        )
      }, Effect.orDie),
      archive: Effect.fn("RoleStoreSql.archive")(function* (organizationId: string, slug: string, at: string) {
        return orUndefined(yield* archiveRow({ organizationId, slug, at }))
      }, Effect.orDie),
      assignments: Effect.fn("RoleStoreSql.assignments")(function* (organizationId: string, slug: string) {
        return (yield* assignmentRows({ organizationId, slug })).map(toAssignment)
      }, Effect.orDie),
      // On every decision creation: untraced (its statement has a span of its own). The creates that share a
      // transaction read a role once for all of them.
      getWithHolders: Effect.fnUntraced(function* (organizationId: string, slug: string) {
        const found = yield* onceInShared(
          sql,
          `decisions.role\n${organizationId}\n${slug}`,
          findWithHolders({ organizationId, slug })
        )
        return Option.isNone(found) ? undefined : { role: toRole(found.value), holders: found.value.holders }
      }, Effect.orDie),
      assign: Effect.fn("RoleStoreSql.assign")(function* (
        organizationId: string,
        slug: string,
        assignment: Assignment
      ) {
        yield* assignRow({ organizationId, slug, ...assignment })
      }, Effect.orDie),
      unassign: Effect.fn("RoleStoreSql.unassign")(function* (organizationId: string, slug: string, email: string) {
        return (yield* unassignRow({ organizationId, slug, email })).length > 0
      }, Effect.orDie),
      heldBy: Effect.fn("RoleStoreSql.heldBy")(function* (organizationId: string, email: string) {
        return (yield* heldRows({ organizationId, email })).map((row) => row.slug)
      }, Effect.orDie)
    })
  })
)
