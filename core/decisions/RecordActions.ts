import { Clock, Context, Effect, Layer, Random, Redacted, Result } from "effect"
import { open, seal } from "../auth/SecretBox.ts"
import { NotConfigured, type Forbidden } from "../kernel/Errors.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { defaultRetryPolicy, stepAction, type ActionEvent } from "./ActionMachine.ts"
import type { RetryPolicy } from "../kernel/RetryPolicy.ts"
import { updateAction } from "./ActionUpdate.ts"
import { actionDueAt, type DecisionAction } from "./DecisionAction.ts"
import { DecisionSignals } from "./DecisionSignals.ts"
import { DecisionStore } from "./DecisionStore.ts"
import { makeDecisionWrites } from "./DecisionWrites.ts"
import { requireAdmin, type WorkspaceUser } from "./Decisions.ts"
import { RecordStoreCredentials } from "./RecordStoreCredentials.ts"
import { RecordUpdater } from "./RecordUpdater.ts"
import { fill } from "./Template.ts"

export interface RecordActionsConfig {
  /** Seals record-store tokens at rest. Unset: setting a token is NotConfigured, and actions wait for setup. */
  readonly secretsKey: Redacted.Redacted<string> | undefined
  readonly retryPolicy?: RetryPolicy | undefined
  /** How long a worker holds an action it is performing; a crash frees it after this. Default 5 minutes. */
  readonly leaseMs?: number | undefined
}

/** What the workspace may know of the record-store credentials: whether they are set, never the token. */
export interface RecordStoreStatus {
  readonly configured: boolean
  readonly updatedAt?: string
  readonly updatedBy?: string
}

/**
 * The record-action worker and the record-store credentials. A queued action is claimed with a
 * lease (an optimistic save, so two workers never both run it), performed through the RecordUpdater
 * port, and its outcome goes through the pure action machine. An action without credentials waits for
 * setup until an admin sets them.
 */
export class RecordActions extends Context.Service<
  RecordActions,
  {
    /** Runs every action due now (at most `batch` decisions' worth, 20 by default), oldest first; answers how many ran. */
    readonly runDue: (batch?: number | undefined) => Effect.Effect<number>
    /**
     * Sets the organization's record-store token (kept sealed, never shown again) and queues every action
     * that was waiting for it. Admins only.
     */
    readonly setCredentials: (
      user: WorkspaceUser,
      token: string
    ) => Effect.Effect<RecordStoreStatus, Forbidden | NotConfigured>
    readonly credentialsStatus: (user: WorkspaceUser) => Effect.Effect<RecordStoreStatus, Forbidden>
    /** Removes the organization's record-store token; actions queued after this wait for setup. */
    readonly clearCredentials: (user: WorkspaceUser) => Effect.Effect<RecordStoreStatus, Forbidden>
  }
>()("core/decisions/RecordActions") {
  static readonly layer = (config: RecordActionsConfig) => Layer.effect(RecordActions, make(config))
}

const make = (config: RecordActionsConfig) =>
  Effect.gen(function* () {
    const store = yield* DecisionStore
    const credentials = yield* RecordStoreCredentials
    const updater = yield* RecordUpdater
    const signals = yield* DecisionSignals
    const writes = yield* makeDecisionWrites
    const policy = config.retryPolicy ?? defaultRetryPolicy
    const leaseMs = config.leaseMs ?? 5 * 60 * 1000

    const update = (
      organizationId: string,
      decisionId: string,
      actionId: string,
      change: (action: DecisionAction, nowMs: number) => Effect.Effect<DecisionAction | undefined>
    ) =>
      updateAction(store, signals, writes, { organizationId, decisionId, actionId }, (action, _, now) =>
        change(action, now)
      )

    const withoutLease = ({ leaseUntil: _lease, ...action }: DecisionAction): DecisionAction => action

    const stepped = (event: ActionEvent) => (action: DecisionAction, now: number) =>
      Effect.map(Random.next, (jitter) => {
        const next = stepAction(withoutLease(action), event, now, jitter, policy)
        return Result.isSuccess(next) ? next.success : undefined
      })

    const tokenOf = Effect.fnUntraced(function* (organizationId: string) {
      if (config.secretsKey === undefined) return undefined
      const stored = yield* credentials.get(organizationId)
      const token = stored === undefined ? undefined : open(Redacted.value(config.secretsKey), stored.sealedToken)
      return token === undefined ? undefined : Redacted.make(token)
    })

    /** Claims, performs and records one action; answers whether it ran. */
    const runOne = Effect.fnUntraced(function* (organizationId: string, decisionId: string, actionId: string) {
      const claimed = yield* update(organizationId, decisionId, actionId, (action, now) => {
        const due = actionDueAt(action)
        return Effect.succeed(
          due === undefined || due > now ? undefined : { ...action, leaseUntil: isoAt(now + leaseMs) }
        )
      })
      if (claimed === undefined) return false
      const { decision, action } = claimed
      const token = yield* tokenOf(organizationId)
      let event: ActionEvent
      if (token === undefined) {
        event = { _tag: "NoCredentials" }
      } else {
        const resolution = decision.resolution
        const values = { resolvedBy: resolution?.decidedBy ?? "", resolvedAt: resolution?.decidedAt ?? "" }
        const fields = Object.fromEntries(
          Object.entries(action.target.fields).map(([name, value]) => [name, fill(value, values)])
        )
        const outcome = yield* Effect.result(updater.update({ token, ...action.target, fields }))
        event = Result.isSuccess(outcome)
          ? { _tag: "Succeeded" }
          : { _tag: "Failed", error: outcome.failure.message, retryable: outcome.failure.retryable }
      }
      yield* update(organizationId, decisionId, actionId, stepped(event))
      return true
    })

    /** Runs every action due now, oldest first; answers how many ran. */
    const runDue = Effect.fn("RecordActions.runDue")(function* (batch: number = 20) {
      const now = yield* Clock.currentTimeMillis
      let ran = 0
      for (const decision of yield* store.actionsDue(isoAt(now), batch)) {
        for (const action of decision.actions ?? []) {
          const due = actionDueAt(action)
          if (due !== undefined && due <= now && (yield* runOne(decision.organizationId, decision.id, action.id))) ran++
        }
      }
      return ran
    })

    /**
     * Sets the organization's record-store token (kept sealed, never shown again) and queues every action
     * that was waiting for it.
     */
    const setCredentials = Effect.fn("RecordActions.setCredentials")(function* (user: WorkspaceUser, token: string) {
      yield* requireAdmin(user)
      if (config.secretsKey === undefined) {
        return yield* new NotConfigured({ message: "Record-store credentials cannot be kept on this service yet." })
      }
      const updatedAt = isoAt(yield* Clock.currentTimeMillis)
      yield* credentials.put({
        organizationId: user.organizationId,
        sealedToken: seal(Redacted.value(config.secretsKey), token),
        updatedBy: user.email,
        updatedAt
      })
      for (const decision of yield* store.actionsWaiting(user.organizationId)) {
        for (const action of decision.actions ?? []) {
          if (action.status === "waiting_for_setup") {
            yield* update(user.organizationId, decision.id, action.id, stepped({ _tag: "CredentialsSet" }))
          }
        }
      }
      return { configured: true, updatedAt, updatedBy: user.email } satisfies RecordStoreStatus
    })

    const credentialsStatus = Effect.fn("RecordActions.credentialsStatus")(function* (user: WorkspaceUser) {
      yield* requireAdmin(user)
      const stored = yield* credentials.get(user.organizationId)
      return (
        stored === undefined
          ? { configured: false }
          : { configured: true, updatedAt: stored.updatedAt, updatedBy: stored.updatedBy }
      ) satisfies RecordStoreStatus
    })

    /**
     * Removes the organization's record-store token. Actions queued after this find no token and wait for
     * setup (the action machine's NoCredentials step) until a token is set again.
     */
    const clearCredentials = Effect.fn("RecordActions.clearCredentials")(function* (user: WorkspaceUser) {
      yield* requireAdmin(user)
      yield* credentials.remove(user.organizationId)
      return { configured: false } satisfies RecordStoreStatus
    })

    return RecordActions.of({ runDue, setCredentials, credentialsStatus, clearCredentials })
  })
