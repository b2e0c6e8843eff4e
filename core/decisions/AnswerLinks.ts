import { Clock, Context, Effect } from "effect"
import type { ProducerEvent } from "../events/ProducerOutbox.ts"
import { normalizeEmail } from "../kernel/Email.ts"
import { epochMs } from "../kernel/Timestamp.ts"
import { isOpen, type Decision } from "./Decision.ts"
import { answerLinkKey, issueAnswerToken, newNonce } from "./AnswerToken.ts"

/** Where answer links lead and the key they are signed under (`AnswerLinkSettings`). */
export interface AnswerLinkConfig {
  readonly baseUrl: string
  readonly secretsKey: string
}

/**
 * Where answer links lead and what signs them: `baseUrl`, the decisions service's address as people's
 * browsers reach it, and `secretsKey`, the service's secrets key (DECISIONS_SECRETS_KEY), from which the
 * tokens' own key is derived. Undefined (the default: no key configured, an embedding without a public
 * address): notifications carry no answer links.
 */
export const AnswerLinkSettings = Context.Reference<AnswerLinkConfig | undefined>("core/decisions/AnswerLinkSettings", {
  defaultValue: () => undefined
})

/** The path of the answer page on the decisions service; the token goes in its query (`?token=`). */
export const answerPath = "/answer"

/** A link without an expiry of its decision's still dies this long after it was made. */
export const answerLinkMaxMillis = 30 * 24 * 3_600_000

/** One answer a message offers: its label and the absolute link of its confirmation page. */
export interface AnswerAction {
  readonly label: string
  readonly url: string
}

/** The label of the link that declines. */
export const declineLabel = "Decline"

/**
 * The answer links of `decision` for `email`: one per option, in the decision's order, then Decline; each
 * token bound to the decision, the person and that answer, with a nonce of its own, valid until the
 * decision's expiry (at most `answerLinkMaxMillis` after `nowMs`). None when links are not configured or the
 * decision is not open.
 */
export const answerLinksFor = (
  settings: AnswerLinkConfig | undefined,
  decision: Decision,
  email: string,
  nowMs: number
): ReadonlyArray<AnswerAction> => {
  if (settings === undefined || !isOpen(decision.status)) return []
  const until = Math.min(
    decision.expiresAt === undefined ? Number.POSITIVE_INFINITY : epochMs(decision.expiresAt),
    nowMs + answerLinkMaxMillis
  )
  const key = answerLinkKey(settings.secretsKey)
  const base = settings.baseUrl.replace(/\/+$/, "")
  const link = (label: string, optionId: string | undefined): AnswerAction => {
    const token = issueAnswerToken(key, {
      organizationId: decision.organizationId,
      decisionId: decision.id,
      email: normalizeEmail(email),
      optionId,
      expiresAtSeconds: Math.ceil(until / 1000),
      nonce: newNonce()
    })
    return { label, url: `${base}${answerPath}?token=${token}` }
  }
  return [...decision.options.map((option) => link(option.label, option.id)), link(declineLabel, undefined)]
}

/**
 * The one place answer links are added to messages: made where a use case is built (reading
 * `AnswerLinkSettings` then), its `withAnswerLinks(decision, events)` gives each `decision_assigned`
 * notification about `decision` (one person each) `data.actions`, that person's links, and leaves every
 * other event as it is. Every message that asks someone to decide (a new or routed decision, a reminder)
 * goes through it. The hub renders the links in the email and the chat message it sends the person
 * (docs/notifications.md).
 */
export const makeAnswerLinks = Effect.gen(function* () {
  const settings = yield* AnswerLinkSettings
  const withAnswerLinks = (decision: Decision, events: ReadonlyArray<ProducerEvent>) =>
    Effect.map(Clock.currentTimeMillis, (now) =>
      events.map((event) => {
        if (event.data["category"] !== "decision_assigned") return event
        const actions = answerLinksFor(settings, decision, event.subject.email, now)
        return actions.length === 0 ? event : { ...event, data: { ...event.data, actions } }
      })
    )
  return { settings, withAnswerLinks }
})
