import type { Effect } from "effect"
import type { Forbidden, NotFound, PayloadTooLarge, ValidationError } from "../kernel/Errors.ts"
import type { ApiKey } from "./CallerKeyStore.ts"
import type { Decision, DecisionCreate, DecisionStatus } from "./Decision.ts"
import type { RecordTarget } from "./DecisionAction.ts"
import type { CallerIdentity, WorkspaceUser } from "./DecisionAdmin.ts"
import type { Routing } from "./Routing.ts"
import type { DecisionScope } from "./DecisionStore.ts"
import type { InvalidActionTransition, InvalidTransition, UnknownRole } from "./Errors.ts"
import type { Assignment, Role, RoleCreate, RoleUpdate } from "./Role.ts"

export interface DecisionView {
  readonly decision: Decision
  readonly routing: Routing
}

export interface DecisionPage {
  readonly decisions: ReadonlyArray<Decision>
  readonly nextCursor: string | undefined
}

/** One decision of a list, with its routing where the list shows it. */
export interface DecisionListItem {
  readonly decision: Decision
  readonly routing?: Routing | undefined
}

export interface DecisionListPage {
  readonly items: ReadonlyArray<DecisionListItem>
  readonly nextCursor: string | undefined
}

/** The workspace's lists: the person's inbox, all the organization's decisions, those nobody can act on. */
export type WorkspaceList = "inbox" | "all" | "unrouted"

export interface ListInput {
  readonly statuses?: ReadonlyArray<DecisionStatus> | undefined
  readonly cursor?: string | undefined
  readonly limit: number
}

/** Why a move on a decision is refused: not the actor's, not found, not allowed from its status, bad input. */
export type MoveError = Forbidden | NotFound | InvalidTransition | UnknownRole | ValidationError

/** A caller key as issued: the key's record and its plaintext, shown this once. */
export interface IssuedCallerKey {
  readonly key: ApiKey
  readonly plaintext: string
}

/**
 * The decisions service's use cases (core/decisions/Decisions.ts), each with what it answers and the errors
 * it may fail with. Every read applies expiry and computes routing live.
 */
export interface DecisionsInterface {
  /**
   * Creates a decision. `actions` are the record actions of a raised template's options; each starts `armed`;
   * `templateSlug` names the template it was raised from. A body over its limit is PayloadTooLarge, not a
   * validation error.
   */
  readonly create: (
    caller: CallerIdentity,
    input: DecisionCreate,
    actions?: ReadonlyArray<{ readonly optionId: string; readonly target: RecordTarget }>,
    templateSlug?: string | undefined
  ) => Effect.Effect<DecisionView, PayloadTooLarge | UnknownRole | ValidationError>
  /** The organization's decision; another organization's is the same NotFound as a missing one. */
  readonly get: (organizationId: string, id: string) => Effect.Effect<DecisionView, NotFound>
  /** The decision once it changes, or as it is after `seconds` (or when `endEarly` completes). */
  readonly waitForChange: (
    organizationId: string,
    id: string,
    seconds: number,
    endEarly?: Effect.Effect<void> | undefined
  ) => Effect.Effect<DecisionView, NotFound>
  readonly list: (organizationId: string, scope: DecisionScope, input: ListInput) => Effect.Effect<DecisionPage>
  /** The caller plane's list (HTTP and the agent tools): the organization's decisions, each with its routing. */
  readonly listForCaller: (caller: CallerIdentity, input: ListInput) => Effect.Effect<DecisionListPage>
  /** A workspace list (the API and the pages); only the unrouted list carries routing. */
  readonly listForUser: (user: WorkspaceUser, list: WorkspaceList, input: ListInput) => Effect.Effect<DecisionListPage>
  /** What the user may act on: decisions routed to a role they hold, or assigned to them. */
  readonly inboxScope: (user: WorkspaceUser) => Effect.Effect<Extract<DecisionScope, { readonly _tag: "Inbox" }>>
  /** Open decisions nobody can act on. */
  readonly unroutedScope: (
    organizationId: string
  ) => Effect.Effect<Extract<DecisionScope, { readonly _tag: "Unrouted" }>>

  readonly choose: (
    user: WorkspaceUser,
    id: string,
    input: { readonly optionId: string; readonly rationale?: string | undefined }
  ) => Effect.Effect<DecisionView, MoveError>
  readonly decline: (
    user: WorkspaceUser,
    id: string,
    input: { readonly rationale?: string | undefined }
  ) => Effect.Effect<DecisionView, MoveError>
  readonly askInfo: (user: WorkspaceUser, id: string, question: string) => Effect.Effect<DecisionView, MoveError>
  readonly answerInfo: (
    caller: CallerIdentity,
    id: string,
    input: { readonly infoRequestId: string; readonly answer: string }
  ) => Effect.Effect<DecisionView, MoveError>
  readonly cancel: (caller: CallerIdentity, id: string) => Effect.Effect<DecisionView, MoveError>
  readonly route: (
    user: WorkspaceUser,
    id: string,
    input: {
      readonly toRole?: string | undefined
      readonly toEmail?: string | undefined
      readonly note?: string | undefined
    }
  ) => Effect.Effect<DecisionView, MoveError>
  /** Queues a dead-lettered record action again. */
  readonly retryAction: (
    user: WorkspaceUser,
    id: string,
    actionId: string
  ) => Effect.Effect<DecisionView, Forbidden | NotFound | InvalidActionTransition>
  /** Writes the expiry of due decisions (at most `batch`); answers how many expired. */
  readonly expireDue: (batch?: number | undefined) => Effect.Effect<number>

  readonly listRoles: (user: WorkspaceUser) => Effect.Effect<ReadonlyArray<Role>>
  readonly createRole: (user: WorkspaceUser, input: RoleCreate) => Effect.Effect<Role, Forbidden | ValidationError>
  readonly updateRole: (
    user: WorkspaceUser,
    slug: string,
    patch: RoleUpdate
  ) => Effect.Effect<Role, Forbidden | NotFound | ValidationError>
  readonly archiveRole: (user: WorkspaceUser, slug: string) => Effect.Effect<Role, Forbidden | NotFound>
  readonly listAssignments: (user: WorkspaceUser, slug: string) => Effect.Effect<ReadonlyArray<Assignment>, NotFound>
  readonly assign: (
    user: WorkspaceUser,
    slug: string,
    memberEmail: string
  ) => Effect.Effect<ReadonlyArray<Assignment>, Forbidden | NotFound>
  readonly unassign: (user: WorkspaceUser, slug: string, email: string) => Effect.Effect<void, Forbidden | NotFound>

  readonly listKeys: (user: WorkspaceUser) => Effect.Effect<ReadonlyArray<ApiKey>, Forbidden>
  readonly createKey: (user: WorkspaceUser, name: string) => Effect.Effect<IssuedCallerKey, Forbidden>
  readonly rotateKey: (user: WorkspaceUser, id: string) => Effect.Effect<IssuedCallerKey, Forbidden | NotFound>
  readonly revokeKey: (user: WorkspaceUser, id: string) => Effect.Effect<ApiKey, Forbidden | NotFound>
}
