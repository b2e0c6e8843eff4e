import type { Block, PageAction, PageDocument } from "../../kernel/PageDocument.ts"
import { isOpen, type Decision, type Link } from "../Decision.ts"
import { actionView } from "../DecisionAction.ts"
import type { Routing } from "../Routing.ts"
import { actionId, decisionPageId } from "./Addresses.ts"
import { actionStatusLabel, statusLabel, timeLabel, urgencyLabel } from "./Labels.ts"
import { markdownLinks } from "./Markdown.ts"
import { quorumBlocks } from "./QuorumBlocks.ts"
import { escalationBlocks } from "./EscalationBlocks.ts"

/** A decision as one person sees it: what the use cases read, and what that person may do. */
export interface DecisionPageView {
  readonly decision: Decision
  readonly routing: Routing
  /** Holds the decision's role or is its direct assignee: may choose, decline and ask. */
  readonly canAct: boolean
  readonly isAdmin: boolean
  /** The organization's active roles, offered by the routing form. */
  readonly roles: ReadonlyArray<{ readonly slug: string; readonly name: string }>
}

const resolutionText = (decision: Decision): string | undefined => {
  const resolution = decision.resolution
  if (resolution === undefined) return undefined
  const option = decision.options.find((o) => o.id === resolution.optionId)?.label
  const by =
    resolution.decidedBy === "system:expiry"
      ? "at expiry"
      : resolution.votes === undefined
        ? `by ${resolution.decidedBy}`
        : `by the votes of ${resolution.votes.map((v) => v.by).join(", ")}`
  const when = timeLabel(resolution.decidedAt)
  switch (resolution.kind) {
    case "chosen":
      return `Chosen: ${option ?? "an option"}, ${by}, ${when}.`
    case "declined":
      return `Declined ${by}, ${when}.`
    case "expired":
      return `Expired without a decision, ${when}.`
    case "expired_default":
      return `Expired; the default option applied: ${option ?? "the default"}, ${when}.`
  }
}

const statusCallout = (view: DecisionPageView): Array<Block> => {
  const { decision, routing } = view
  const blocks: Array<Block> = []
  const resolved = resolutionText(decision)
  if (resolved !== undefined) {
    const rationale = decision.resolution?.rationale
    blocks.push({
      type: "callout",
      tone: decision.resolution?.kind === "chosen" ? "success" : "info",
      text: rationale === undefined ? resolved : `${resolved} Rationale: ${rationale}`
    })
  } else if (decision.status === "cancelled") {
    blocks.push({ type: "callout", tone: "info", text: "The caller cancelled this decision." })
  } else if (decision.status === "needs_info") {
    const open = decision.infoRequests.find((r) => r.answer === undefined)
    blocks.push({
      type: "callout",
      tone: "warning",
      text: `Waiting for the caller to answer: ${open?.question ?? "a question"}`
    })
  }
  if (routing.unrouted) {
    blocks.push({
      type: "callout",
      tone: "danger",
      text: "Nobody can act on this decision: route it to a role with members or to a person."
    })
  }
  return blocks
}

/** What is said under an option's label: its description and its consequence. */
const optionDetail = (option: Decision["options"][number]): string | undefined => {
  const detail = [option.description, option.consequence].filter((t) => t !== undefined && t !== "").join(" · ")
  return detail === "" ? undefined : detail
}

/** One button per option, each primary: choosing is what the page is for. */
const optionActions = (decision: Decision): Array<PageAction> =>
  decision.options.map((option): PageAction => {
    const detail = [optionDetail(option), decision.defaultOptionId === option.id ? "Applied at expiry" : undefined]
      .filter((t) => t !== undefined)
      .join(" · ")
    return {
      actionId: actionId({ _tag: "Choose", decisionId: decision.id, optionId: option.id }),
      label: option.label,
      style: "primary",
      ...(detail === "" ? {} : { description: detail }),
      confirm: `Choose "${option.label}"?`
    }
  })

/** Declining is a way out, not the answer the page asks for: a plain button on its own row, after the options. */
const declineAction = (decision: Decision): PageAction => ({
  actionId: actionId({ _tag: "Decline", decisionId: decision.id }),
  label: "Decline",
  style: "default",
  confirm: "Decline this decision without choosing any option?"
})

/** Who can answer a decision still open sees its options once, as buttons; everyone else reads them as a list. */
const offersOptions = (view: DecisionPageView): boolean => isOpen(view.decision.status) && view.canAct

const optionsList = (view: DecisionPageView): Array<Block> => {
  const { decision } = view
  if (offersOptions(view)) return []
  return [
    { type: "heading", text: "Options", level: 2 },
    {
      type: "list",
      items: decision.options.map((o) => {
        const detail = optionDetail(o)
        return {
          title: o.label,
          ...(detail === undefined ? {} : { subtitle: detail }),
          ...(decision.resolution?.optionId === o.id
            ? { badge: "Chosen" }
            : decision.defaultOptionId === o.id
              ? { badge: "Default" }
              : {})
        }
      })
    }
  ]
}

const decideBlocks = (view: DecisionPageView): Array<Block> => {
  const { decision } = view
  if (!isOpen(decision.status)) return []
  if (!view.canAct) {
    return [
      {
        type: "callout",
        tone: "info",
        text: `Holders of the ${decision.roleSlug} role and the decision's assignee can answer it.`
      }
    ]
  }
  const blocks: Array<Block> = [
    { type: "heading", text: "Decide", level: 2 },
    { type: "actionRow", label: "Options", actions: optionActions(decision) },
    { type: "actionRow", label: "Other answers", actions: [declineAction(decision)] },
    {
      type: "form",
      id: "choose-with-rationale",
      fields: [
        {
          name: "optionId",
          label: "Option",
          type: "select",
          required: true,
          options: decision.options.map((o) => ({ value: o.id, label: o.label }))
        },
        { name: "rationale", label: "Rationale", type: "textarea" }
      ],
      submit: { label: "Choose with rationale", actionId: actionId({ _tag: "Choose", decisionId: decision.id }) }
    }
  ]
  if (decision.status === "pending") {
    blocks.push({
      type: "form",
      id: "ask",
      fields: [{ name: "question", label: "Ask the caller a question", type: "textarea", required: true }],
      submit: { label: "Ask", actionId: actionId({ _tag: "Ask", decisionId: decision.id }) }
    })
  }
  return blocks
}

const routeBlocks = (view: DecisionPageView): Array<Block> => {
  if (!isOpen(view.decision.status) || !(view.isAdmin || view.canAct)) return []
  return [
    { type: "heading", text: "Route", level: 2 },
    {
      type: "form",
      id: "route",
      fields: [
        {
          name: "toRole",
          label: "To role",
          type: "select",
          options: view.roles.map((r) => ({ value: r.slug, label: r.name }))
        },
        { name: "toEmail", label: "Or to a person", type: "email" },
        { name: "note", label: "Note", type: "textarea" }
      ],
      submit: { label: "Route", actionId: actionId({ _tag: "Route", decisionId: view.decision.id }) }
    }
  ]
}

const factsBlocks = (decision: Decision): Array<Block> =>
  decision.facts.length === 0
    ? []
    : [
        { type: "heading", text: "Facts", level: 2 },
        {
          type: "table",
          columns: [
            { key: "label", label: "Fact" },
            { key: "value", label: "Value" }
          ],
          rows: decision.facts.map((f) => ({ label: f.label, value: f.value }))
        }
      ]

const linksBlocks = (links: ReadonlyArray<Link>): Array<Block> =>
  links.length === 0
    ? []
    : [
        { type: "heading", text: "Links", level: 2 },
        { type: "text", format: "markdown", text: markdownLinks(links) }
      ]

const questionsBlocks = (decision: Decision): Array<Block> =>
  decision.infoRequests.length === 0
    ? []
    : [
        { type: "heading", text: "Questions", level: 2 },
        {
          type: "list",
          items: decision.infoRequests.map((r) => ({
            title: r.question,
            subtitle:
              r.answer === undefined
                ? `Asked by ${r.askedBy}, ${timeLabel(r.askedAt)}; not answered yet`
                : `Answer: ${r.answer}`,
            badge: r.answer === undefined ? "Open" : "Answered"
          }))
        }
      ]

const recordActionBlocks = (view: DecisionPageView): Array<Block> => {
  const actions = (view.decision.actions ?? []).map(actionView)
  if (actions.length === 0) return []
  const optionLabel = (id: string) => view.decision.options.find((o) => o.id === id)?.label ?? id
  const retryable = actions.filter((a) => a.status === "dead_lettered")
  const blocks: Array<Block> = [
    { type: "heading", text: "Record actions", level: 2 },
    {
      type: "table",
      columns: [
        { key: "option", label: "When chosen" },
        { key: "summary", label: "Does" },
        { key: "status", label: "Status" },
        { key: "attempts", label: "Attempts" },
        { key: "lastError", label: "Last error" }
      ],
      rows: actions.map((a) => ({
        option: optionLabel(a.optionId),
        summary: a.summary,
        status: actionStatusLabel(a.status),
        attempts: String(a.attempts),
        lastError: a.lastError ?? ""
      }))
    }
  ]
  if (retryable.length > 0 && (view.isAdmin || view.canAct)) {
    blocks.push({
      type: "actionRow",
      actions: retryable.map((a) => ({
        actionId: actionId({ _tag: "RetryAction", decisionId: view.decision.id, actionId: a.id }),
        label: `Retry: ${a.summary}`,
        description: "Queue the failed record update again."
      }))
    })
  }
  return blocks
}

const historyBlocks = (decision: Decision): Array<Block> =>
  decision.assignmentHistory.length === 0
    ? []
    : [
        { type: "heading", text: "Routing history", level: 2 },
        {
          type: "list",
          items: decision.assignmentHistory.map((change) => ({
            title:
              change.toEmail !== undefined
                ? `Assigned to ${change.toEmail}`
                : `Moved from ${change.fromRole ?? "?"} to ${change.toRole ?? "?"}`,
            subtitle: `${change.actor}, ${timeLabel(change.at)}${change.note === undefined ? "" : `: ${change.note}`}`
          }))
        }
      ]

/**
 * A decision's page: its title (the document's, which the workspace shows as the page's heading), status, the
 * caller's markdown body (rendered sanitized by the workspace, never as HTML), facts, links, its options once:
 * for those who may act on an open decision one primary button per option (its description and consequence
 * under it), then Decline, smaller, on a row of its own; for everyone else a list (the chosen and the default
 * marked). Then a question form, the routing form, and the record actions' statuses.
 */
export const decisionPage = (view: DecisionPageView): PageDocument => {
  const { decision } = view
  const blocks: Array<Block> = [
    ...statusCallout(view),
    {
      type: "statGroup",
      stats: [
        { label: "Status", value: statusLabel(decision.status) },
        { label: "Urgency", value: urgencyLabel(decision.urgency) },
        { label: "Role", value: decision.roleSlug },
        { label: "Requested by", value: decision.callerName },
        ...(decision.directAssigneeEmail === undefined
          ? []
          : [{ label: "Assigned to", value: decision.directAssigneeEmail }]),
        ...(decision.expiresAt === undefined ? [] : [{ label: "Expires", value: timeLabel(decision.expiresAt) }])
      ]
    },
    ...(decision.body === undefined || decision.body === ""
      ? []
      : [{ type: "text" as const, format: "markdown" as const, text: decision.body }]),
    ...factsBlocks(decision),
    ...linksBlocks(decision.links),
    ...optionsList(view),
    ...quorumBlocks(decision),
    ...decideBlocks(view),
    ...questionsBlocks(decision),
    ...routeBlocks(view),
    ...recordActionBlocks(view),
    ...escalationBlocks(decision),
    ...historyBlocks(decision)
  ]
  return { id: decisionPageId(decision.id), title: decision.title, blocks }
}
