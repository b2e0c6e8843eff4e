import { Effect, Layer } from "effect"
import type { Assignment, Role } from "../../../core/decisions/Role.ts"
import { RoleStore } from "../../../core/decisions/RoleStore.ts"

// Code-unit order, as SQL's "C" collation sorts: `localeCompare` depends on the machine's ICU data and
// locale, and puts "a_b@x" before "a.b@x" where every byte-wise order puts it after.
const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

interface Row {
  role: Omit<Role, "memberCount">
  readonly members: Map<string, Assignment>
}

export const RoleStoreMemory = Layer.sync(RoleStore, () => {
  const rows = new Map<string, Row>()
  const key = (organizationId: string, slug: string) => `${organizationId}\u0000${slug}`
  const organizationOf = new Map<string, string>()
  const show = (row: Row): Role => ({ ...row.role, memberCount: row.members.size })
  const ofOrganization = (organizationId: string) =>
    [...rows.entries()].filter(([k]) => organizationOf.get(k) === organizationId).map(([, row]) => row)

  return RoleStore.of({
    list: (organizationId) =>
      Effect.sync(() =>
        ofOrganization(organizationId)
          .map(show)
          .sort((a, b) => byCodeUnits(a.slug, b.slug))
      ),
    get: (organizationId, slug) =>
      Effect.sync(() => {
        const row = rows.get(key(organizationId, slug))
        return row === undefined ? undefined : show(row)
      }),
    create: (role) =>
      Effect.sync(() => {
        const k = key(role.organizationId, role.slug)
        if (rows.has(k)) return false
        rows.set(k, {
          role: {
            id: role.id,
            slug: role.slug,
            name: role.name,
            ...(role.description === undefined ? {} : { description: role.description }),
            ...(role.escalation === undefined ? {} : { escalation: role.escalation }),
            createdAt: role.createdAt
          },
          members: new Map()
        })
        organizationOf.set(k, role.organizationId)
        return true
      }),
    update: (organizationId, slug, patch) =>
      Effect.sync(() => {
        const row = rows.get(key(organizationId, slug))
        if (row === undefined) return undefined
        const { description: _old, escalation: _ladder, ...rest } = row.role
        const description = patch.description === undefined ? row.role.description : (patch.description ?? undefined)
        const escalation = patch.escalation === undefined ? row.role.escalation : (patch.escalation ?? undefined)
        row.role = {
          ...rest,
          ...(patch.name === undefined ? {} : { name: patch.name }),
          ...(description === undefined ? {} : { description }),
          ...(escalation === undefined ? {} : { escalation })
        }
        return show(row)
      }),
    archive: (organizationId, slug, at) =>
      Effect.sync(() => {
        const row = rows.get(key(organizationId, slug))
        if (row === undefined) return undefined
        if (row.role.archivedAt === undefined) row.role = { ...row.role, archivedAt: at }
        return show(row)
      }),
    assignments: (organizationId, slug) =>
      Effect.sync(() =>
        [...(rows.get(key(organizationId, slug))?.members.values() ?? [])].sort((a, b) =>
          byCodeUnits(a.memberEmail, b.memberEmail)
        )
      ),
    getWithHolders: (organizationId, slug) =>
      Effect.sync(() => {
        const row = rows.get(key(organizationId, slug))
        if (row === undefined) return undefined
        const holders = [...row.members.values()].map((a) => a.memberEmail).sort(byCodeUnits)
        return { role: show(row), holders }
      }),
    assign: (organizationId, slug, assignment) =>
      Effect.sync(() => {
        const row = rows.get(key(organizationId, slug))
        if (row !== undefined && !row.members.has(assignment.memberEmail)) {
          row.members.set(assignment.memberEmail, assignment)
        }
      }),
    unassign: (organizationId, slug, email) =>
      Effect.sync(() => rows.get(key(organizationId, slug))?.members.delete(email) ?? false),
    heldBy: (organizationId, email) =>
      Effect.sync(() =>
        ofOrganization(organizationId)
          .filter((row) => row.role.archivedAt === undefined && row.members.has(email))
          .map((row) => row.role.slug)
      )
  })
})
