import { Clock, Effect } from "effect"
import { isoAt } from "../kernel/Timestamp.ts"
import type { Decision } from "./Decision.ts"
import { settle } from "./DecisionMachine.ts"
import type { CallerIdentity, WorkspaceUser } from "./DecisionAdmin.ts"
import type { DecisionListPage, DecisionPage, DecisionView, ListInput, WorkspaceList } from "./DecisionsInterface.ts"
import { DecisionStore, type DecisionScope } from "./DecisionStore.ts"
import { RoleStore } from "./RoleStore.ts"

/**
 * The decisions service's lists, part of the Decisions service: one organization's decisions a page at a time,
 * newest first, each as its reader sees it now (expiry applied). The caller plane's list and the workspace's
 * lists are use cases of their own, so the HTTP routes, the agent tools and the pages show the same lists.
 * `view` adds a decision's live routing.
 */
export const makeDecisionLists = (view: (decision: Decision) => Effect.Effect<DecisionView>) =>
  Effect.gen(function* () {
    const decisions = yield* DecisionStore
    const roles = yield* RoleStore

    const list = Effect.fn("Decisions.list")(function* (
      organizationId: string,
      scope: DecisionScope,
      input: ListInput
    ) {
      const now = yield* Clock.currentTimeMillis
      const rows = yield* decisions.list({
        organizationId,
        scope,
        statuses: input.statuses,
        nowIso: isoAt(now),
        afterId: input.cursor,
        limit: input.limit + 1
      })
      const settled = rows.map((d) => settle(d, now).decision)
      const page = settled.slice(0, input.limit)
      return {
        decisions: page,
        nextCursor: settled.length > input.limit ? page[page.length - 1]!.id : undefined
      } satisfies DecisionPage
    })

    const withRouting = (decisionsOnPage: ReadonlyArray<Decision>) => Effect.forEach(decisionsOnPage, view)

    const inboxScope = Effect.fnUntraced(function* (user: WorkspaceUser) {
      return {
        _tag: "Inbox",
        email: user.email,
        roleSlugs: yield* roles.heldBy(user.organizationId, user.email)
      } satisfies DecisionScope
    })

    const unroutedScope = Effect.fnUntraced(function* (organizationId: string) {
      const all = yield* roles.list(organizationId)
      const routable: Array<string> = []
      for (const role of all) {
        if (role.archivedAt === undefined && role.memberCount > 0) routable.push(role.slug)
      }
      return { _tag: "Unrouted", routableRoleSlugs: routable } satisfies DecisionScope
    })

    /** The caller plane's list: the caller's organization's decisions, each with its routing. */
    const listForCaller = Effect.fnUntraced(function* (caller: CallerIdentity, input: ListInput) {
      const page = yield* list(caller.organizationId, { _tag: "All" }, input)
      return { items: yield* withRouting(page.decisions), nextCursor: page.nextCursor } satisfies DecisionListPage
    })

    /** A workspace list: the person's inbox, all the organization's decisions, or the unrouted ones with routing. */
    const listForUser = Effect.fnUntraced(function* (user: WorkspaceUser, which: WorkspaceList, input: ListInput) {
      const scope: DecisionScope =
        which === "all"
          ? { _tag: "All" }
          : which === "unrouted"
            ? yield* unroutedScope(user.organizationId)
            : yield* inboxScope(user)
      const page = yield* list(user.organizationId, scope, input)
      // Routing is on unrouted list items (what to fix), not on inbox items.
      const items =
        which === "unrouted" ? yield* withRouting(page.decisions) : page.decisions.map((d) => ({ decision: d }))
      return { items, nextCursor: page.nextCursor } satisfies DecisionListPage
    })

    return { list, inboxScope, unroutedScope, listForCaller, listForUser }
  })
