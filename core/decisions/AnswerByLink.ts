import { Clock, Context, Effect, Layer } from "effect"
import { OrganizationStatuses } from "../events/OrganizationStatuses.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { Transactions } from "../kernel/Transactions.ts"
import { isOpen, type Decision } from "./Decision.ts"
import { AnswerLinkSettings, declineLabel } from "./AnswerLinks.ts"
import { answerLinkKey, readAnswerToken, type AnswerClaims } from "./AnswerToken.ts"
import { Decisions } from "./Decisions.ts"

/**
 * The answer links used so far, by nonce: a link answers once. `spend` records a nonce in the unit of work
 * it runs in (so with the answer it gives) and answers false when it was recorded already; on SQL a second
 * unit spending the same nonce waits for the first and then answers false. Infrastructure failures are
 * defects.
 */
export class AnswerLinkUses extends Context.Service<
  AnswerLinkUses,
  {
    readonly isUsed: (nonce: string) => Effect.Effect<boolean>
    readonly spend: (use: {
      readonly nonce: string
      readonly decisionId: string
      readonly atIso: string
    }) => Effect.Effect<boolean>
  }
>()("core/decisions/AnswerLinkUses") {}

/** What an answer link offers or did. Every case but `Ready` and `Answered` shows why nothing was done. */
export type AnswerLinkState =
  /** Not a link this service made, altered, or links are not configured. */
  | { readonly _tag: "Invalid" }
  /** Its time has passed while its decision has no outcome to show (a decision without expiry). */
  | { readonly _tag: "Expired" }
  /** It was used already. */
  | { readonly _tag: "Used"; readonly decision: Decision }
  /** The decision is no longer open: answered, expired or cancelled. */
  | { readonly _tag: "Settled"; readonly decision: Decision }
  /** The person may not answer it (no longer a holder of its role nor its assignee). */
  | { readonly _tag: "NotAllowed"; readonly decision: Decision }
  /** It can answer: the page asks for the confirmation. */
  | { readonly _tag: "Ready"; readonly decision: Decision; readonly email: string; readonly answer: string }
  /** The confirmation answered the decision (or recorded the person's vote, when it needs several). */
  | { readonly _tag: "Answered"; readonly decision: Decision; readonly email: string; readonly answer: string }

const labelOf = (decision: Decision, claims: AnswerClaims): string | undefined =>
  claims.optionId === undefined ? declineLabel : decision.options.find((o) => o.id === claims.optionId)?.label

class Refused extends Error {
  constructor(readonly state: AnswerLinkState) {
    super("answer link refused")
  }
}

/**
 * Answers from a notification's link (docs/decisions.md, "Answers from the message"). `preview` only reads:
 * opening a link (a GET, a HEAD, a mail scanner following it) changes nothing. `answer` is the confirmation's
 * POST: in one unit of work it answers through the same use cases as the workspace (`choose`, `decline`) for
 * the person the link was sent to, checked as a decider at that moment, and records the link as used.
 */
export class AnswerByLink extends Context.Service<
  AnswerByLink,
  {
    readonly preview: (token: string) => Effect.Effect<AnswerLinkState>
    readonly answer: (token: string) => Effect.Effect<AnswerLinkState>
  }
>()("core/decisions/AnswerByLink") {
  static readonly layer = Layer.effect(
    AnswerByLink,
    Effect.gen(function* () {
      const decisions = yield* Decisions
      const uses = yield* AnswerLinkUses
      const statuses = yield* OrganizationStatuses
      const transactions = yield* Transactions
      const settings = yield* AnswerLinkSettings

      /** The link's claims and its decision as it is now, or why it cannot answer. */
      const check = Effect.fnUntraced(function* (token: string) {
        const claims = settings === undefined ? undefined : readAnswerToken(answerLinkKey(settings.secretsKey), token)
        if (claims === undefined) return { _tag: "Invalid" } as const
        if (yield* statuses.organizationSuspended(claims.organizationId)) return { _tag: "Invalid" } as const
        const found = yield* Effect.result(decisions.get(claims.organizationId, claims.decisionId))
        if (found._tag === "Failure") return { _tag: "Invalid" } as const
        const decision = found.success.decision
        const answer = labelOf(decision, claims)
        if (answer === undefined) return { _tag: "Invalid" } as const
        if (!isOpen(decision.status)) return { _tag: "Settled", decision } as const
        if (yield* uses.isUsed(claims.nonce)) return { _tag: "Used", decision } as const
        if ((yield* Clock.currentTimeMillis) >= claims.expiresAtSeconds * 1000) return { _tag: "Expired" } as const
        return { _tag: "Ready", decision, email: claims.email, answer, claims } as const
      })

      const preview = Effect.fn("AnswerByLink.preview")(function* (token: string) {
        const state = yield* check(token)
        if (state._tag !== "Ready") return state
        return { _tag: "Ready", decision: state.decision, email: state.email, answer: state.answer } as const
      })

      const answer = Effect.fn("AnswerByLink.answer")(function* (token: string) {
        const attempt = transactions.atomically(
          Effect.gen(function* () {
            const state = yield* check(token)
            if (state._tag !== "Ready") return state as AnswerLinkState
            const { claims, decision } = state
            const user = { organizationId: claims.organizationId, email: claims.email, isAdmin: false }
            const moved = yield* Effect.result(
              claims.optionId === undefined
                ? decisions.decline(user, claims.decisionId, {})
                : decisions.choose(user, claims.decisionId, { optionId: claims.optionId })
            )
            if (moved._tag === "Failure") {
              const refusal = moved.failure
              const now = yield* Effect.result(decisions.get(claims.organizationId, claims.decisionId))
              const current = now._tag === "Success" ? now.success.decision : decision
              return (
                refusal._tag === "Forbidden"
                  ? { _tag: "NotAllowed", decision: current }
                  : !isOpen(current.status)
                    ? { _tag: "Settled", decision: current }
                    : { _tag: "Invalid" }
              ) as AnswerLinkState
            }
            const at = isoAt(yield* Clock.currentTimeMillis)
            // A second use waits here for the first and finds its nonce: this unit is undone, its answer too.
            if (!(yield* uses.spend({ nonce: claims.nonce, decisionId: claims.decisionId, atIso: at }))) {
              return yield* Effect.fail(new Refused({ _tag: "Used", decision }))
            }
            return {
              _tag: "Answered",
              decision: moved.success.decision,
              email: claims.email,
              answer: state.answer
            } as AnswerLinkState
          })
        )
        return yield* attempt.pipe(Effect.catch((refused) => Effect.succeed(refused.state)))
      })

      return AnswerByLink.of({ preview, answer })
    })
  )
}
