import { Effect } from "effect"
import type { ProducerEvent } from "../events/ProducerOutbox.ts"
import { stableUlid } from "../events/StableId.ts"
import { emailsEqual, isEmail, normalizeEmail } from "../kernel/Email.ts"
import { epochMs } from "../kernel/Timestamp.ts"
import { isOpen, type Decision } from "./Decision.ts"
import { makeAnswerLinks } from "./AnswerLinks.ts"
import { OrganizationAdmins } from "./OrganizationAdmins.ts"
import { RoleStore, type RoleWithHolders } from "./RoleStore.ts"

/** The event type the hub's catalog assigns to the decisions service for its notifications. */
export const notificationType = "decisions.notification.created"

/**
 * The event type by which the decisions service tells the hub that a decision's notifications are settled:
 * the decision is answered, expired or cancelled, so nobody is asked for it any more.
 */
export const settlementType = "decisions.notification.settled"

/** What a notification is about; it is also its `category` in the hub's feed. */
export type NotificationKind =
  | "decision_assigned"
  | "info_answered"
  | "decision_unrouted"
  | "action_dead_lettered"
  /** An escalation step told the organization's admins (core/decisions/Escalations.ts). */
  | "decision_escalated"

/** Something a change did that someone should hear about. */
export type Notable =
  /** The decision was created (or raised from a template) or routed: it reached new deciders. */
  | { readonly _tag: "Assigned"; readonly actor: string | undefined }
  /** The caller answered an info request: its asker hears. */
  | { readonly _tag: "InfoAnswered"; readonly infoRequestId: string; readonly askedBy: string; readonly answer: string }
  /** The decision left the open states (answered, expired or cancelled): what asked for it is settled. */
  | { readonly _tag: "Settled" }
  /** A record action failed for good. */
  | {
      readonly _tag: "ActionDeadLettered"
      readonly actionId: string
      readonly summary: string
      readonly attempts: number
    }

/**
 * What a change from `before` (undefined: the decision is new) to `after` did that people are told of.
 * Pure: who hears is decided by `notificationsFor` from the role and the organization's admins as they are.
 */
export const notables = (before: Decision | undefined, after: Decision): ReadonlyArray<Notable> => {
  const found: Array<Notable> = []
  const routed = before !== undefined && after.assignmentHistory.length > before.assignmentHistory.length
  if (isOpen(after.status) && (before === undefined || routed)) {
    found.push({ _tag: "Assigned", actor: routed ? after.assignmentHistory.at(-1)?.actor : undefined })
  }
  if (before !== undefined && isOpen(before.status) && !isOpen(after.status)) found.push({ _tag: "Settled" })
  for (const request of after.infoRequests) {
    const was = before?.infoRequests.find((r) => r.id === request.id)
    if (request.answer !== undefined && was?.answer === undefined) {
      found.push({ _tag: "InfoAnswered", infoRequestId: request.id, askedBy: request.askedBy, answer: request.answer })
    }
  }
  for (const action of after.actions ?? []) {
    const was = before?.actions?.find((a) => a.id === action.id)
    if (action.status === "dead_lettered" && was?.status !== "dead_lettered") {
      found.push({
        _tag: "ActionDeadLettered",
        actionId: action.id,
        summary: action.summary,
        attempts: action.attempts
      })
    }
  }
  return found
}

/** Who is there to hear: the active holders of the decision's role, and the organization's admins. */
export interface Audience {
  readonly holders: ReadonlyArray<string>
  readonly admins: ReadonlyArray<string>
}

const bodyMax = 2000

/** At most `max` UTF-16 units, never ending in half of a surrogate pair. */
const clip = (text: string, max: number): string => {
  if (text.length <= max) return text
  const end = /[\ud800-\udbff]/.test(text.charAt(max - 1)) ? max - 1 : max
  return `${text.slice(0, end - 1)}…`
}

/** The workspace-relative link of a decision's page. */
export const decisionLink = (decisionId: string) => `/apps/decisions/decision-${decisionId}`

const unique = (emails: ReadonlyArray<string>) => [...new Set(emails.map(normalizeEmail))]

/**
 * One notification of `kind` about `decision` to each of `emails` (once per person), at `at`. `key` names
 * what happened among the decision's notifications of that kind: with the decision, the kind and the
 * recipient it makes the event's stable id.
 */
export const decisionNotifications = (
  decision: Decision,
  at: string,
  what: {
    readonly kind: NotificationKind
    readonly key: string
    readonly emails: ReadonlyArray<string>
    readonly body: string
  }
): ReadonlyArray<ProducerEvent> =>
  unique(what.emails).map((email) => ({
    id: stableUlid(epochMs(at), `decisions:${decision.id}:${what.kind}:${what.key}:${email}`),
    type: notificationType,
    service: "decisions",
    occurredAt: at,
    subject: { email, companyId: decision.organizationId },
    data: {
      title: clip(decision.title, 200),
      body: clip(what.body, bodyMax),
      url: decisionLink(decision.id),
      category: what.kind
    },
    contractVersion: "v1"
  }))

/** The notifications that ask someone to act on a decision: those a settlement marks done. */
export const askingKinds: ReadonlyArray<NotificationKind> = [
  "decision_assigned",
  "decision_unrouted",
  "decision_escalated"
]

/** The subject of a settlement nobody made (an expiry, the caller cancelling): an address that is no one's. */
export const nobody = "nobody@decisions.invalid"

/** What a decision's settled notifications say from then on: how it ended. */
export const settledBody = (decision: Decision): string => {
  const resolution = decision.resolution
  if (resolution === undefined) return "The caller cancelled this decision."
  const option = decision.options.find((o) => o.id === resolution.optionId)?.label
  switch (resolution.kind) {
    case "chosen":
      return `Answered by ${resolution.decidedBy}: ${option ?? "an option"}.`
    case "declined":
      return `Declined by ${resolution.decidedBy}.`
    case "expired":
      return "Expired without a decision."
    case "expired_default":
      return `Expired; the default option applied: ${option ?? "the default"}.`
  }
}

/**
 * The one event that settles a decision's asking notifications at the hub (every person's, whoever was told):
 * its id is stable, so writing the change's events again adds nothing. The subject is the person who
 * answered, or `nobody` when no person did.
 */
export const settlementEvent = (decision: Decision, at: string): ProducerEvent => {
  const by = decision.resolution?.decidedBy
  return {
    id: stableUlid(epochMs(at), `decisions:${decision.id}:settled`),
    type: settlementType,
    service: "decisions",
    occurredAt: at,
    subject: {
      email: by !== undefined && isEmail(by) ? normalizeEmail(by) : nobody,
      companyId: decision.organizationId
    },
    data: { url: decisionLink(decision.id), categories: askingKinds, body: clip(settledBody(decision), bodyMax) },
    contractVersion: "v1"
  }
}

/** What the organization's admins read when nobody can act on a decision. */
export const unroutedBody = "Nobody can act on this decision: route it to a role with members or to a person."

/**
 * The `decisions.notification.created` events one change implies, as the hub's catalog requires their
 * `data`: `title` (the decision's title, at most 200), `body` (at most 2000), `url` (the decision's
 * workspace-relative link) and `category` (the kind). Each is addressed to one person of the decision's
 * organization (`subject.companyId`). Ids are stable (core/events/StableId.ts): the decision, what
 * happened and the recipient name them, so writing a change's events again adds nothing at the hub.
 *
 * - created, raised from a template or routed: each active holder of the role and the direct assignee
 *   (not the person who routed it); when nobody can act on it, the organization's admins instead;
 * - answered, expired or cancelled: one `decisions.notification.settled` event, by which the hub marks every
 *   asking notification of the decision done (read, saying how it ended), whoever it was filed for;
 * - an info request answered: the person who asked;
 * - a record action dead-lettered: the organization's admins.
 */
export const notificationsFor = (
  before: Decision | undefined,
  after: Decision,
  audience: Audience
): ReadonlyArray<ProducerEvent> => {
  const events: Array<ProducerEvent> = []
  const add = (kind: NotificationKind, key: string, emails: ReadonlyArray<string>, body: string) =>
    events.push(...decisionNotifications(after, after.updatedAt, { kind, key, emails, body }))
  for (const notable of notables(before, after)) {
    switch (notable._tag) {
      case "Assigned": {
        const key = String(after.assignmentHistory.length)
        const deciders = [
          ...audience.holders,
          ...(after.directAssigneeEmail === undefined ? [] : [after.directAssigneeEmail])
        ]
        if (deciders.length === 0) {
          add("decision_unrouted", key, audience.admins, unroutedBody)
        } else {
          const { actor } = notable
          add(
            "decision_assigned",
            key,
            deciders.filter((email) => actor === undefined || !emailsEqual(email, actor)),
            actor === undefined
              ? `${after.callerName} asks for your decision.`
              : `${actor} routed this decision to you.`
          )
        }
        break
      }
      case "Settled":
        events.push(settlementEvent(after, after.updatedAt))
        break
      case "InfoAnswered":
        add("info_answered", notable.infoRequestId, [notable.askedBy], `Your question was answered: ${notable.answer}`)
        break
      case "ActionDeadLettered":
        add(
          "action_dead_lettered",
          `${notable.actionId}:${notable.attempts}`,
          audience.admins,
          `A record action failed for good and needs attention: ${notable.summary}`
        )
        break
    }
  }
  return events
}

/**
 * What a change from `before` (undefined: the decision is new) to `after` announces, and to whom: the events
 * of `notificationsFor`, for the role's holders and the organization's admins as they are now. Those are read
 * only when a change needs them; run it inside the unit of work that writes the change, so they are read as
 * the change is written. It writes nothing: the use case writes the events with its change
 * (DecisionWrites.ts).
 */
export const makeDecisionAnnouncements = Effect.gen(function* () {
  const roles = yield* RoleStore
  const admins = yield* OrganizationAdmins
  const { withAnswerLinks } = yield* makeAnswerLinks

  const audienceFor = Effect.fnUntraced(function* (
    decision: Decision,
    found: ReadonlyArray<Notable>,
    known: RoleWithHolders | undefined
  ) {
    const needsHolders = found.some((n) => n._tag === "Assigned")
    const state = needsHolders
      ? (known ?? (yield* roles.getWithHolders(decision.organizationId, decision.roleSlug)))
      : undefined
    const holders = state === undefined || state.role.archivedAt !== undefined ? [] : state.holders
    const needsAdmins =
      found.some((n) => n._tag === "ActionDeadLettered") ||
      (needsHolders && holders.length === 0 && decision.directAssigneeEmail === undefined)
    return { holders, admins: needsAdmins ? yield* admins.list(decision.organizationId) : [] } satisfies Audience
  })

  return Effect.fnUntraced(function* (
    before: Decision | undefined,
    after: Decision,
    /** The decision's role and holders as the unit already read them, so they are not read again. */
    known?: RoleWithHolders
  ) {
    const found = notables(before, after)
    if (found.length === 0) return []
    return yield* withAnswerLinks(after, notificationsFor(before, after, yield* audienceFor(after, found, known)))
  })
})
