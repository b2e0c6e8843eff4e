import { Effect, Layer } from "effect"
import { emailsEqual } from "../../../core/kernel/Email.ts"
import { epochMs } from "../../../core/kernel/Timestamp.ts"
import { isOpen, type Decision } from "../../../core/decisions/Decision.ts"
import { settle } from "../../../core/decisions/DecisionMachine.ts"
import { DecisionStore, type DecisionQuery } from "../../../core/decisions/DecisionStore.ts"

const inScope = (d: Decision, query: DecisionQuery, nowMs: number): boolean => {
  const scope = query.scope
  switch (scope._tag) {
    case "All":
      return true
    case "Inbox":
      return (
        scope.roleSlugs.includes(d.roleSlug) ||
        (d.directAssigneeEmail !== undefined && emailsEqual(d.directAssigneeEmail, scope.email))
      )
    case "Unrouted":
      return (
        isOpen(settle(d, nowMs).decision.status) &&
        d.directAssigneeEmail === undefined &&
        !scope.routableRoleSlugs.includes(d.roleSlug)
      )
  }
}

/** Decisions in a map; every operation is synchronous, so each is atomic. */
export const DecisionStoreMemory = Layer.sync(DecisionStore, () => {
  const rows = new Map<string, Decision>()
  return DecisionStore.of({
    insert: (decision) => Effect.sync(() => void rows.set(decision.id, decision)),
    get: (organizationId, id) =>
      Effect.sync(() => {
        const row = rows.get(id)
        return row !== undefined && row.organizationId === organizationId ? row : undefined
      }),
    save: (next, expectedVersion) =>
      Effect.sync(() => {
        const row = rows.get(next.id)
        if (row === undefined || row.organizationId !== next.organizationId || row.version !== expectedVersion)
          return false
        rows.set(next.id, next)
        return true
      }),
    list: (query) =>
      Effect.sync(() => {
        const now = epochMs(query.nowIso)
        return [...rows.values()]
          .filter(
            (d) =>
              d.organizationId === query.organizationId &&
              (query.afterId === undefined || d.id < query.afterId) &&
              (query.statuses === undefined || query.statuses.includes(settle(d, now).decision.status)) &&
              inScope(d, query, now)
          )
          .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
          .slice(0, query.limit)
      }),
    due: (nowIso, limit) =>
      Effect.sync(() =>
        [...rows.values()]
          .filter((d) => isOpen(d.status) && d.expiresAt !== undefined && epochMs(d.expiresAt) <= epochMs(nowIso))
          .sort((a, b) => epochMs(a.expiresAt!) - epochMs(b.expiresAt!))
          .slice(0, limit)
      )
  })
})
