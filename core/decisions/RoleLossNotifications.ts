import { Effect } from "effect"
import { ProducerOutbox } from "../events/ProducerOutbox.ts"
import type { Decision } from "./Decision.ts"
import { decisionNotifications, unroutedBody } from "./DecisionNotifications.ts"
import { DecisionStore } from "./DecisionStore.ts"
import { OrganizationAdmins } from "./OrganizationAdmins.ts"
import { RoleStore } from "./RoleStore.ts"

/** How a role came to leave its decisions with nobody: archived, or its last holder removed. */
export type RoleLoss = "archived" | "emptied"

const pageSize = 200

/**
 * Tells the organization's admins of each open decision a role change left with nobody to act on it (no
 * active holder of its role, no direct assignee): one `decision_unrouted` notification per decision and
 * admin. Meant to run inside the unit of work of the change, so the notifications are stored exactly when
 * the change is. The ids name the decision, the role, how it was lost and when (`at`, taken once before the
 * unit), so the unit run again adds nothing.
 */
export const makeRoleLossNotifier = Effect.gen(function* () {
  const decisions = yield* DecisionStore
  const roles = yield* RoleStore
  const admins = yield* OrganizationAdmins
  const outbox = yield* ProducerOutbox

  /** The open decisions of `slug` nobody can act on now, every page of them. */
  const orphanedBy = Effect.fnUntraced(function* (organizationId: string, slug: string, at: string) {
    // Every other role counts as routable here, so what comes back is this role's (and missing roles').
    const others = (yield* roles.list(organizationId)).map((r) => r.slug).filter((s) => s !== slug)
    const found: Array<Decision> = []
    let afterId: string | undefined
    for (;;) {
      const page = yield* decisions.list({
        organizationId,
        scope: { _tag: "Unrouted", routableRoleSlugs: others },
        nowIso: at,
        limit: pageSize,
        ...(afterId === undefined ? {} : { afterId })
      })
      found.push(...page.filter((d) => d.roleSlug === slug))
      if (page.length < pageSize) return found
      afterId = page.at(-1)!.id
    }
  })

  return Effect.fnUntraced(function* (organizationId: string, slug: string, loss: RoleLoss, at: string) {
    const orphaned = yield* orphanedBy(organizationId, slug, at)
    if (orphaned.length === 0) return
    const emails = yield* admins.list(organizationId)
    for (const decision of orphaned) {
      const events = decisionNotifications(decision, at, {
        kind: "decision_unrouted",
        key: `role:${slug}:${loss}:${at}`,
        emails,
        body: unroutedBody
      })
      yield* Effect.forEach(events, outbox.enqueue, { discard: true })
    }
  })
})
