import { Clock, Effect } from "effect"
import { issueSecret } from "../auth/IssuedSecret.ts"
import { normalizeEmail } from "../kernel/Email.ts"
import { Forbidden, NotFound } from "../kernel/Errors.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { Transactions } from "../kernel/Transactions.ts"
import { CallerKeyStore, type ApiKey, type StoredCallerKey } from "./CallerKeyStore.ts"
import { validationError } from "./DecisionRules.ts"
import { defaultLadderProblem } from "./EscalationLadder.ts"
import type { Assignment, RoleCreate, RoleUpdate } from "./Role.ts"
import { makeRoleLossNotifier } from "./RoleLossNotifications.ts"
import { RoleStore } from "./RoleStore.ts"

/** Org admins (token claim `orgRole` OWNER or ADMIN) keep roles, keys, templates, webhooks and integrations. */
export const requireAdmin = (user: WorkspaceUser): Effect.Effect<void, Forbidden> =>
  user.isAdmin ? Effect.void : Effect.fail(new Forbidden({ message: "Only organization admins may do this." }))

/** Who calls: a caller key (an agent or service) or a workspace user, always inside one organization. */
export interface CallerIdentity {
  readonly organizationId: string
  readonly callerName: string
  readonly keyId: string
}

export interface WorkspaceUser {
  readonly organizationId: string
  readonly email: string
  readonly isAdmin: boolean
}

const nowMs = Clock.currentTimeMillis

/**
 * The organization's administration of the decisions service: its roles and who holds them, and its caller
 * keys. Part of the Decisions service (its interface lists these methods).
 */
export const makeDecisionAdmin = Effect.gen(function* () {
  const roles = yield* RoleStore
  const keys = yield* CallerKeyStore
  const ids = yield* IdGenerator
  const transactions = yield* Transactions
  const tellRoleLost = yield* makeRoleLossNotifier

  // ---- roles (admins) ----

  const missingRole = () => new NotFound({ message: "No such role." })

  const listRoles = Effect.fn("Decisions.listRoles")(function* (user: WorkspaceUser) {
    return yield* roles.list(user.organizationId)
  })

  const createRole = Effect.fn("Decisions.createRole")(function* (user: WorkspaceUser, input: RoleCreate) {
    yield* requireAdmin(user)
    yield* defaultLadderProblem(input.escalation)
    const created = yield* roles.create({
      id: yield* ids.next,
      organizationId: user.organizationId,
      slug: input.slug,
      name: input.name,
      description: input.description,
      escalation: input.escalation,
      createdAt: isoAt(yield* nowMs)
    })
    if (!created) return yield* validationError("slug", "a role with this slug already exists")
    return (yield* roles.get(user.organizationId, input.slug))!
  })

  const updateRole = Effect.fn("Decisions.updateRole")(function* (
    user: WorkspaceUser,
    slug: string,
    patch: RoleUpdate
  ) {
    yield* requireAdmin(user)
    yield* defaultLadderProblem(patch.escalation ?? undefined)
    const role = yield* roles.update(user.organizationId, slug, patch)
    if (role === undefined) return yield* missingRole()
    return role
  })

  /** Archiving a role, like removing its last holder, may leave open decisions with nobody: admins hear. */
  const archiveRole = Effect.fn("Decisions.archiveRole")(function* (user: WorkspaceUser, slug: string) {
    yield* requireAdmin(user)
    const at = isoAt(yield* nowMs)
    return yield* transactions.atomically(
      Effect.gen(function* () {
        const wasActive = (yield* roles.get(user.organizationId, slug))?.archivedAt === undefined
        const role = yield* roles.archive(user.organizationId, slug, at)
        if (role === undefined) return yield* missingRole()
        if (wasActive) yield* tellRoleLost(user.organizationId, slug, "archived", at)
        return role
      })
    )
  })

  const existingRole = Effect.fnUntraced(function* (organizationId: string, slug: string) {
    const role = yield* roles.get(organizationId, slug)
    if (role === undefined) return yield* missingRole()
    return role
  })

  const listAssignments = Effect.fn("Decisions.listAssignments")(function* (user: WorkspaceUser, slug: string) {
    yield* existingRole(user.organizationId, slug)
    return yield* roles.assignments(user.organizationId, slug)
  })

  const assign = Effect.fn("Decisions.assign")(function* (user: WorkspaceUser, slug: string, memberEmail: string) {
    yield* requireAdmin(user)
    yield* existingRole(user.organizationId, slug)
    const assignment: Assignment = {
      memberEmail: normalizeEmail(memberEmail),
      addedBy: user.email,
      addedAt: isoAt(yield* nowMs)
    }
    yield* roles.assign(user.organizationId, slug, assignment)
    return yield* roles.assignments(user.organizationId, slug)
  })

  const unassign = Effect.fn("Decisions.unassign")(function* (user: WorkspaceUser, slug: string, email: string) {
    yield* requireAdmin(user)
    const at = isoAt(yield* nowMs)
    yield* transactions.atomically(
      Effect.gen(function* () {
        const role = yield* existingRole(user.organizationId, slug)
        if (!(yield* roles.unassign(user.organizationId, slug, normalizeEmail(email)))) {
          return yield* new NotFound({ message: "That member does not hold this role." })
        }
        if (role.archivedAt === undefined && (yield* roles.assignments(user.organizationId, slug)).length === 0) {
          yield* tellRoleLost(user.organizationId, slug, "emptied", at)
        }
      })
    )
  })

  // ---- caller keys (admins) ----

  const listKeys = Effect.fn("Decisions.listKeys")(function* (user: WorkspaceUser) {
    yield* requireAdmin(user)
    return yield* keys.list(user.organizationId)
  })

  const createKey = Effect.fn("Decisions.createKey")(function* (user: WorkspaceUser, name: string) {
    yield* requireAdmin(user)
    const secret = issueSecret("dcd_")
    const stored: StoredCallerKey = {
      id: yield* ids.next,
      organizationId: user.organizationId,
      name,
      keyPrefix: secret.displayPrefix,
      hash: secret.hash,
      createdBy: user.email,
      createdAt: isoAt(yield* nowMs)
    }
    yield* keys.create(stored)
    const { organizationId: _org, hash: _hash, ...key } = stored
    return { key: key satisfies ApiKey, plaintext: secret.plaintext }
  })

  const rotateKey = Effect.fn("Decisions.rotateKey")(function* (user: WorkspaceUser, id: string) {
    yield* requireAdmin(user)
    const secret = issueSecret("dcd_")
    const key = yield* keys.rotate(user.organizationId, id, { hash: secret.hash, keyPrefix: secret.displayPrefix })
    if (key === undefined) return yield* new NotFound({ message: "No such key." })
    return { key, plaintext: secret.plaintext }
  })

  const revokeKey = Effect.fn("Decisions.revokeKey")(function* (user: WorkspaceUser, id: string) {
    yield* requireAdmin(user)
    const key = yield* keys.revoke(user.organizationId, id, isoAt(yield* nowMs))
    if (key === undefined) return yield* new NotFound({ message: "No such key." })
    return key
  })

  return {
    listRoles,
    createRole,
    updateRole,
    archiveRole,
    listAssignments,
    assign,
    unassign,
    listKeys,
    createKey,
    rotateKey,
    revokeKey
  }
})
