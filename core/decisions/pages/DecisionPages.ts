import { Context, Effect, Layer } from "effect"
import {
  NotFound,
  type Forbidden,
  type NotConfigured,
  type PayloadTooLarge,
  type ValidationError
} from "../../kernel/Errors.ts"
import type { ActionResult, PageDocument, PageEntry } from "../../kernel/PageDocument.ts"
import { emailsEqual } from "../../kernel/Email.ts"
import type { DecisionStatus } from "../Decision.ts"
import type { InvalidActionTransition, InvalidTransition, UnknownRole, UnknownTemplate } from "../Errors.ts"
import { DecisionFlow } from "../DecisionFlow.ts"
import { Decisions, type WorkspaceUser } from "../Decisions.ts"
import { RecordActions } from "../RecordActions.ts"
import { Templates } from "../Templates.ts"
import { WebhookDeliveries } from "../WebhookDeliveries.ts"
import { Webhooks } from "../Webhooks.ts"
import { parsePageId, type ListPageId } from "./Addresses.ts"
import type { ActionValues } from "./ActionValues.ts"
import { decisionPage } from "./DecisionPage.ts"
import { flowPage, parseFlowPageId } from "./FlowPage.ts"
import { integrationsPage } from "./IntegrationsPage.ts"
import { keysPage } from "./KeysPage.ts"
import { listPage } from "./ListPage.ts"
import {
  activityOf,
  countCap,
  searchOf,
  summaryOf,
  type ActivityItem,
  type SearchHit,
  type Summary
} from "./Overview.ts"
import { runAction } from "./PageActions.ts"
import { pageEntries } from "./PageList.ts"
import { rolesPage } from "./RolesPage.ts"
import { templatesPage } from "./TemplatesPage.ts"
import { webhooksPage } from "./WebhooksPage.ts"

export interface ListQuery {
  readonly cursor?: string | undefined
  readonly statuses?: ReadonlyArray<DecisionStatus> | undefined
}

// A list page shows this many rows; webhook pages this many deliveries per endpoint.
const listPageSize = 25
const deliveriesShown = 10
// Search and activity look at the organization's most recent decisions, up to this many.
const searchWindow = 500
const activityShown = 20

const noSuchPage = () => new NotFound({ message: "No such page." })

/**
 * The decisions service's pages plane: the page list, each page built (purely) from what the use cases
 * read for the person, actions run through the same use cases as the API, and the summary, activity and
 * search answers. Every read and write is the person's own (their organization, their roles, their admin
 * claim), exactly as on the workspace API.
 */
export class DecisionPages extends Context.Service<
  DecisionPages,
  {
    /** The pages the person sees in the workspace's menu. */
    readonly pages: (user: WorkspaceUser) => Effect.Effect<ReadonlyArray<PageEntry>>
    /** A page by id; a page that does not exist, or a decision that is not the person's organization's, is the same NotFound. */
    readonly page: (
      user: WorkspaceUser,
      id: string,
      query?: ListQuery | undefined
    ) => Effect.Effect<PageDocument, Forbidden | NotFound>
    /** Runs an action a page offered, through the same use cases as the API: whatever they refuse is refused here. */
    readonly act: (user: WorkspaceUser, actionId: string, values: ActionValues) => Effect.Effect<ActionResult, ActError>
    readonly summary: (user: WorkspaceUser) => Effect.Effect<Summary>
    readonly activity: (user: WorkspaceUser) => Effect.Effect<ReadonlyArray<ActivityItem>>
    readonly search: (user: WorkspaceUser, query: string, limit: number) => Effect.Effect<ReadonlyArray<SearchHit>>
  }
>()("core/decisions/pages/DecisionPages") {
  static readonly layer: Layer.Layer<
    DecisionPages,
    never,
    Decisions | Templates | Webhooks | WebhookDeliveries | RecordActions | DecisionFlow
  > = Layer.effect(
    DecisionPages,
    Effect.suspend(() => make)
  )
}

/** What running a page's action may be refused with: what the use cases behind the actions refuse. */
export type ActError =
  | Forbidden
  | NotFound
  | NotConfigured
  | ValidationError
  | PayloadTooLarge
  | UnknownRole
  | UnknownTemplate
  | InvalidTransition
  | InvalidActionTransition

const make = Effect.gen(function* () {
  const decisions = yield* Decisions
  const templates = yield* Templates
  const webhooks = yield* Webhooks
  const deliveries = yield* WebhookDeliveries
  const recordActions = yield* RecordActions
  const flow = yield* DecisionFlow

  const listDocument = Effect.fnUntraced(function* (user: WorkspaceUser, list: ListPageId, query: ListQuery) {
    const page = yield* decisions.listForUser(user, list, {
      statuses: query.statuses,
      cursor: query.cursor,
      limit: listPageSize
    })
    return listPage({ list, items: page.items, nextCursor: page.nextCursor, statuses: query.statuses })
  })

  const decisionDocument = Effect.fnUntraced(function* (user: WorkspaceUser, decisionId: string) {
    const view = yield* Effect.catchTag(decisions.get(user.organizationId, decisionId), "NotFound", () =>
      Effect.fail(noSuchPage())
    )
    const held = (yield* decisions.inboxScope(user)).roleSlugs
    const direct = view.decision.directAssigneeEmail
    const roles = (yield* decisions.listRoles(user)).filter((r) => r.archivedAt === undefined)
    return decisionPage({
      ...view,
      canAct: (direct !== undefined && emailsEqual(direct, user.email)) || held.includes(view.decision.roleSlug),
      isAdmin: user.isAdmin,
      roles: roles.map((r) => ({ slug: r.slug, name: r.name }))
    })
  })

  const rolesDocument = Effect.fnUntraced(function* (user: WorkspaceUser) {
    const roles = yield* decisions.listRoles(user)
    const withMembers = yield* Effect.forEach(roles, (role) =>
      Effect.map(decisions.listAssignments(user, role.slug), (members) => ({ role, members }))
    )
    return rolesPage({ isAdmin: user.isAdmin, roles: withMembers })
  })

  const webhooksDocument = Effect.fnUntraced(function* (user: WorkspaceUser) {
    const endpoints = yield* webhooks.list(user)
    const withDeliveries = yield* Effect.forEach(endpoints, (webhook) =>
      Effect.map(deliveries.list(user, webhook.id, deliveriesShown), (list) => ({ webhook, deliveries: list }))
    )
    return webhooksPage({ webhooks: withDeliveries })
  })

  const pages = (user: WorkspaceUser) => Effect.succeed(pageEntries(user))

  /** A page by id; a page that does not exist, or a decision that is not the person's organization's, is the same NotFound. */
  const page = Effect.fn("DecisionPages.page")(function* (user: WorkspaceUser, id: string, query: ListQuery = {}) {
    const flowDays = parseFlowPageId(id)
    if (flowDays !== undefined) return flowPage(yield* flow.flow(user, flowDays))
    const address = parsePageId(id)
    if (address === undefined) return yield* noSuchPage()
    switch (address._tag) {
      case "List":
        return yield* listDocument(user, address.list, query)
      case "Decision":
        return yield* decisionDocument(user, address.decisionId)
      case "Admin":
        switch (address.page) {
          case "roles":
            return yield* rolesDocument(user)
          case "keys":
            return keysPage(yield* decisions.listKeys(user))
          case "templates":
            return templatesPage({ isAdmin: user.isAdmin, templates: yield* templates.list(user) })
          case "webhooks":
            return yield* webhooksDocument(user)
          case "integrations":
            return integrationsPage(yield* recordActions.credentialsStatus(user))
        }
    }
  })

  const act = Effect.fn("DecisionPages.act")(function* (user: WorkspaceUser, actionId: string, values: ActionValues) {
    return yield* runAction({ decisions, templates, webhooks, recordActions }, user, actionId, values)
  })

  const openInbox = Effect.fnUntraced(function* (user: WorkspaceUser) {
    const page = yield* decisions.list(user.organizationId, yield* decisions.inboxScope(user), {
      statuses: ["pending", "needs_info"],
      limit: countCap
    })
    return page.decisions
  })

  const summary = Effect.fn("DecisionPages.summary")(function* (user: WorkspaceUser) {
    const unrouted = yield* decisions.list(user.organizationId, yield* decisions.unroutedScope(user.organizationId), {
      limit: countCap
    })
    return summaryOf({ openInInbox: yield* openInbox(user), unrouted: unrouted.decisions.length })
  })

  const activity = Effect.fn("DecisionPages.activity")(function* (user: WorkspaceUser) {
    const recent = yield* decisions.list(user.organizationId, yield* decisions.inboxScope(user), {
      limit: activityShown
    })
    return activityOf(recent.decisions, activityShown)
  })

  const search = Effect.fn("DecisionPages.search")(function* (user: WorkspaceUser, query: string, limit: number) {
    const recent = yield* decisions.list(user.organizationId, { _tag: "All" }, { limit: searchWindow })
    return searchOf(recent.decisions, query, limit)
  })

  return DecisionPages.of({ pages, page, act, summary, activity, search })
})
