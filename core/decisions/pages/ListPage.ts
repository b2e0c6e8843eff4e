import type { Block, PageDocument } from "../../kernel/PageDocument.ts"
import type { Decision, DecisionStatus } from "../Decision.ts"
import type { Routing } from "../Routing.ts"
import { decisionHref, pageHref, type ListPageId } from "./Addresses.ts"
import { statusLabel, timeLabel, urgencyLabel } from "./Labels.ts"

/** One page of a decision list, as the use cases read it for the person. */
export interface ListView {
  readonly list: ListPageId
  readonly items: ReadonlyArray<{ readonly decision: Decision; readonly routing?: Routing | undefined }>
  readonly nextCursor: string | undefined
  /** The status filter the page was asked for (kept in the next page's link). */
  readonly statuses?: ReadonlyArray<DecisionStatus> | undefined
}

const titles: Record<ListPageId, { readonly title: string; readonly description: string; readonly empty: string }> = {
  inbox: {
    title: "Inbox",
    description: "Decisions routed to a role you hold or assigned to you.",
    empty: "Nothing is waiting for you."
  },
  all: {
    title: "All decisions",
    description: "Every decision of your organization, newest first.",
    empty: "Your organization has no decisions yet."
  },
  unrouted: {
    title: "Unrouted",
    description: "Open decisions nobody can act on: their role has no members, is archived or does not exist.",
    empty: "Every open decision has someone who can act on it."
  }
}

const reasons: Record<NonNullable<Routing["reason"]>, string> = {
  no_members: "Role has no members",
  role_archived: "Role archived",
  role_missing: "Role does not exist"
}

const columns = (list: ListPageId) => [
  { key: "title", label: "Decision" },
  { key: "status", label: "Status" },
  { key: "urgency", label: "Urgency" },
  { key: "role", label: "Role" },
  ...(list === "unrouted" ? [{ key: "reason", label: "Why unrouted" }] : []),
  { key: "created", label: "Created" }
]

/** The inbox, all and unrouted pages: a table whose rows open the decision's page, and a link to the next page. */
export const listPage = (view: ListView): PageDocument => {
  const text = titles[view.list]
  const blocks: Array<Block> = []
  if (view.items.length === 0) {
    blocks.push({ type: "callout", tone: "info", text: text.empty })
  } else {
    blocks.push({
      type: "table",
      columns: columns(view.list),
      rows: view.items.map(({ decision, routing }) => ({
        title: decision.title,
        status: statusLabel(decision.status),
        urgency: urgencyLabel(decision.urgency),
        role: decision.roleSlug,
        ...(view.list === "unrouted" ? { reason: routing?.reason === undefined ? "" : reasons[routing.reason] } : {}),
        created: timeLabel(decision.createdAt),
        href: decisionHref(decision.id)
      }))
    })
  }
  if (view.nextCursor !== undefined) {
    const query: Record<string, string> = { cursor: view.nextCursor }
    if (view.statuses !== undefined && view.statuses.length > 0) query["status"] = view.statuses.join(",")
    blocks.push({ type: "list", items: [{ title: "Older decisions", href: pageHref(view.list, query) }] })
  }
  return { id: view.list, title: text.title, description: text.description, blocks }
}
