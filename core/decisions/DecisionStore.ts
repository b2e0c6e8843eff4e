import { Context, Effect } from "effect"
import type { Decision, DecisionStatus } from "./Decision.ts"
import type { WebhookDelivery } from "./WebhookOutbox.ts"

/** Which decisions of one organization a list shows. */
export type DecisionScope =
  | { readonly _tag: "All" }
  /** What a user may act on: decisions routed to a role they hold, or assigned to them directly. */
  | { readonly _tag: "Inbox"; readonly email: string; readonly roleSlugs: ReadonlyArray<string> }
  /** Open decisions nobody can act on: no direct assignee and a role outside `routableRoleSlugs`. */
  | { readonly _tag: "Unrouted"; readonly routableRoleSlugs: ReadonlyArray<string> }

export interface DecisionQuery {
  readonly organizationId: string
  readonly scope: DecisionScope
  /**
   * Statuses as a reader sees them at `nowIso`: an open decision past `expiresAt` counts as `expired`
   * (core/decisions/DecisionMachine.ts `settle`), whether or not the scheduler has written that yet.
   */
  readonly statuses?: ReadonlyArray<DecisionStatus> | undefined
  readonly nowIso: string
  /** Newest first; the page starts strictly after this id (ULIDs sort by creation time). */
  readonly afterId?: string | undefined
  readonly limit: number
}

/**
 * Decisions, one organization at a time: every read and write names the organization, and a decision of
 * another organization is indistinguishable from a missing one. `save` is optimistic: it writes only if
 * the stored version is still `expectedVersion`, so two concurrent moves never both apply; the webhook
 * deliveries it is given are added to the outbox (core/decisions/WebhookOutbox.ts) in the same
 * transaction, so a change and its deliveries are stored together or not at all.
 * Infrastructure failures are defects.
 */
export class DecisionStore extends Context.Service<
  DecisionStore,
  {
    /** Inside a unit of work, the new decision may be written only at the unit's end (core/kernel/Transactions.ts). */
    readonly insert: (decision: Decision) => Effect.Effect<void>
    readonly get: (organizationId: string, id: string) => Effect.Effect<Decision | undefined>
    readonly save: (
      next: Decision,
      expectedVersion: number,
      outbox?: ReadonlyArray<WebhookDelivery>
    ) => Effect.Effect<boolean>
    readonly list: (query: DecisionQuery) => Effect.Effect<ReadonlyArray<Decision>>
    /** Open decisions whose `expiresAt` is at or before `nowIso`, any organization, oldest first. */
    readonly due: (nowIso: string, limit: number) => Effect.Effect<ReadonlyArray<Decision>>
    /**
     * Decisions, any organization, with a record action a worker may run at `nowIso`
     * (core/decisions/DecisionAction.ts `actionDueAt`), the longest-waiting first.
     */
    readonly actionsDue: (nowIso: string, limit: number) => Effect.Effect<ReadonlyArray<Decision>>
    /**
     * One open decision, any organization, whose next escalation step is due at `nowIso` (core/decisions/Escalation.ts
     * `escalationDueAt`, before its expiry), the longest-waiting first, or undefined. Inside a unit of work the
     * decision is held until the unit ends, and units claiming at the same time pass over it, so two workers
     * never run one step, and no move of the decision commits in between.
     */
    readonly claimEscalation: (nowIso: string) => Effect.Effect<Decision | undefined>
    /** One organization's decisions with an action `waiting_for_setup`. */
    readonly actionsWaiting: (organizationId: string) => Effect.Effect<ReadonlyArray<Decision>>
  }
>()("core/decisions/DecisionStore") {}
