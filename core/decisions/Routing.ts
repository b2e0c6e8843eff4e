import { emailsEqual } from "../kernel/Email.ts"
import { isOpen, type Decision } from "./Decision.ts"
import type { Role } from "./Role.ts"

/** Computed live from the role as it is now, never stored. */
export interface Routing {
  readonly assigneeCount: number
  readonly unrouted: boolean
  readonly reason?: "no_members" | "role_missing" | "role_archived"
}

/** What routing needs to know about the decision's role right now. */
export interface RoleState {
  readonly role: Role | undefined
  readonly holders: ReadonlyArray<string>
}

export const activeHolders = (state: RoleState): ReadonlyArray<string> =>
  state.role === undefined || state.role.archivedAt !== undefined ? [] : state.holders

export const computeRouting = (decision: Decision, state: RoleState): Routing => {
  const holders = activeHolders(state).length
  const assigneeCount = holders + (decision.directAssigneeEmail === undefined ? 0 : 1)
  const unrouted = isOpen(decision.status) && assigneeCount === 0
  if (!unrouted) return { assigneeCount, unrouted }
  const reason =
    state.role === undefined ? "role_missing" : state.role.archivedAt !== undefined ? "role_archived" : "no_members"
  return { assigneeCount, unrouted, reason }
}

/** Who may choose, decline or ask: an active holder of the decision's role, or its direct assignee. */
export const mayAct = (decision: Decision, state: RoleState, email: string): boolean =>
  (decision.directAssigneeEmail !== undefined && emailsEqual(decision.directAssigneeEmail, email)) ||
  activeHolders(state).some((holder) => emailsEqual(holder, email))
