import { Context, Effect, Layer } from "effect"
import { emailsEqual } from "../../../core/kernel/Email.ts"
import { epochMs } from "../../../core/kernel/Timestamp.ts"
import { isOpen, type Decision } from "../../../core/decisions/Decision.ts"
import { actionsDueAt, hasWaitingAction } from "../../../core/decisions/DecisionAction.ts"
import { settle } from "../../../core/decisions/DecisionMachine.ts"
import { escalationDueAt } from "../../../core/decisions/Escalation.ts"
import { DecisionStore, type DecisionQuery } from "../../../core/decisions/DecisionStore.ts"
import { WebhookOutbox, type WebhookDelivery } from "../../../core/decisions/WebhookOutbox.ts"

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

const newestFirst = <A extends { readonly id: string }>(a: A, b: A) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)

/**
 * Decisions and the webhook outbox in maps; every operation is synchronous, so each is atomic, and a save
 * with its deliveries is one step, like the SQL adapter's transaction.
 */
export const DecisionStoreMemory: Layer.Layer<DecisionStore | WebhookOutbox> = Layer.effectContext(
  Effect.sync(() => {
    const rows = new Map<string, Decision>()
    const outbox = new Map<string, WebhookDelivery>()

    const store = DecisionStore.of({
      insert: (decision) => Effect.sync(() => void rows.set(decision.id, decision)),
      get: (organizationId, id) =>
        Effect.sync(() => {
          const row = rows.get(id)
          return row !== undefined && row.organizationId === organizationId ? row : undefined
        }),
      save: (next, expectedVersion, deliveries = []) =>
        Effect.sync(() => {
          const row = rows.get(next.id)
          if (row === undefined || row.organizationId !== next.organizationId || row.version !== expectedVersion)
            return false
          rows.set(next.id, next)
          for (const delivery of deliveries) outbox.set(delivery.id, delivery)
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
            .sort(newestFirst)
            .slice(0, query.limit)
        }),
      due: (nowIso, limit) =>
        Effect.sync(() =>
          [...rows.values()]
            .filter((d) => isOpen(d.status) && d.expiresAt !== undefined && epochMs(d.expiresAt) <= epochMs(nowIso))
            .sort((a, b) => epochMs(a.expiresAt!) - epochMs(b.expiresAt!))
            .slice(0, limit)
        ),
      actionsDue: (nowIso, limit) =>
        Effect.sync(() => {
          const now = epochMs(nowIso)
          return [...rows.values()]
            .flatMap((d) => {
              const at = actionsDueAt(d.actions)
              return at !== undefined && at <= now ? [{ d, at }] : []
            })
            .sort((a, b) => a.at - b.at || (a.d.id < b.d.id ? -1 : 1))
            .slice(0, limit)
            .map(({ d }) => d)
        }),
      // Units of work take turns in memory: the one claiming holds the decision until it ends anyway.
      claimEscalation: (nowIso) =>
        Effect.sync(() => {
          const now = epochMs(nowIso)
          let found: { readonly d: Decision; readonly at: number } | undefined
          for (const d of rows.values()) {
            const at = escalationDueAt(d)
            if (at === undefined || at > now) continue
            if (d.expiresAt !== undefined && epochMs(d.expiresAt) <= now) continue
            if (found === undefined || at < found.at || (at === found.at && d.id < found.d.id)) found = { d, at }
          }
          return found?.d
        }),
      actionsWaiting: (organizationId) =>
        Effect.sync(() =>
          [...rows.values()].filter((d) => d.organizationId === organizationId && hasWaitingAction(d.actions))
        )
    })

    const deliveries = WebhookOutbox.of({
      claimDue: (nowIso, leaseUntilIso, limit) =>
        Effect.sync(() => {
          const now = epochMs(nowIso)
          const due = [...outbox.values()]
            .filter((d) => d.status === "pending" && epochMs(d.nextAttemptAt) <= now)
            .sort((a, b) => epochMs(a.nextAttemptAt) - epochMs(b.nextAttemptAt) || (a.id < b.id ? -1 : 1))
            .slice(0, limit)
          return due
            .map((d) => {
              const claimed = { ...d, nextAttemptAt: leaseUntilIso }
              outbox.set(d.id, claimed)
              return claimed
            })
            .sort((a, b) => (a.id < b.id ? -1 : 1))
        }),
      record: (id, result) =>
        Effect.sync(() => {
          const d = outbox.get(id)
          if (d === undefined) return
          const { lastError: _error, lastStatusCode: _code, ...rest } = d
          const attempts = d.attempts + 1
          const code = result.statusCode === undefined ? {} : { lastStatusCode: result.statusCode }
          switch (result._tag) {
            case "Delivered":
              outbox.set(id, { ...rest, ...code, status: "delivered", attempts, completedAt: result.at })
              return
            case "Retry":
              outbox.set(id, {
                ...rest,
                ...code,
                attempts,
                nextAttemptAt: result.nextAttemptAt,
                lastError: result.error
              })
              return
            case "GiveUp":
              outbox.set(id, {
                ...rest,
                ...code,
                status: result.status,
                attempts,
                completedAt: result.at,
                lastError: result.error
              })
              return
          }
        }),
      list: (organizationId, options) =>
        Effect.sync(() =>
          [...outbox.values()]
            .filter(
              (d) =>
                d.organizationId === organizationId &&
                (options.webhookId === undefined || d.webhookId === options.webhookId)
            )
            .sort(newestFirst)
            .slice(0, options.limit)
        )
    })

    return Context.make(DecisionStore, store).pipe(Context.add(WebhookOutbox, deliveries))
  })
)
