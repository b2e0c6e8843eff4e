import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, ManagedRuntime, Redacted } from "effect"
import * as fc from "fast-check"
import {
  RecordUpdateFailed,
  RecordUpdaterMemory,
  RecordUpdaterMemoryLog
} from "../../adapters/memory/decisions/RecordUpdaterMemory.ts"
import { actionRetryPolicy, type ActionStatus } from "../../core/decisions/ActionMachine.ts"
import { DecisionsDataMemory } from "../../apps/server/decisions/DecisionsLayers.ts"
import { Decisions, type WorkspaceUser } from "../../core/decisions/Decisions.ts"
import { RecordActions } from "../../core/decisions/RecordActions.ts"
import { Templates } from "../../core/decisions/Templates.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"

const maxAttempts = 3

/** The decisions use cases with the record-action worker over memory adapters; retries are due at once. */
const stack = () =>
  Layer.mergeAll(
    Templates.layer,
    RecordActions.layer({
      secretsKey: Redacted.make("model-test-key"),
      retryPolicy: actionRetryPolicy({ maxAttempts, firstSeconds: 0, maxSeconds: 0 })
    })
  ).pipe(
    Layer.provideMerge(Decisions.layer),
    Layer.provideMerge(Layer.mergeAll(DecisionsDataMemory, RecordUpdaterMemory, IdGeneratorUlid))
  )

type Runtime = ManagedRuntime.ManagedRuntime<Decisions | Templates | RecordActions | RecordUpdaterMemoryLog, never>

interface Model {
  status: ActionStatus
  attempts: number
  credentials: boolean
  /** Failures the updater will answer next, first to last (true: retryable). */
  failures: Array<boolean>
  /** Records written: once per successful run, never more. */
  updates: number
}

interface Real {
  readonly runtime: Runtime
  readonly decisionId: string
  readonly actionId: string
}

const admin: WorkspaceUser = { organizationId: "acme", email: "admin@acme.test", isAdmin: true }

const check = async (model: Model, real: Real) => {
  const view = await real.runtime.runPromise(Effect.flatMap(Decisions, (d) => d.get("acme", real.decisionId)))
  const action = view.decision.actions!.find((a) => a.id === real.actionId)!
  const log = await real.runtime.runPromise(RecordUpdaterMemoryLog)
  assert.strictEqual(action.status, model.status)
  assert.strictEqual(action.attempts, model.attempts)
  assert.strictEqual(log.updates.length, model.updates)
}

class RunWorker implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    await real.runtime.runPromise(Effect.flatMap(RecordActions, (a) => a.runDue()))
    if (model.status === "queued" || model.status === "retrying") {
      if (!model.credentials) model.status = "waiting_for_setup"
      else {
        model.attempts++
        const failure = model.failures.shift()
        if (failure === undefined) {
          model.status = "succeeded"
          model.updates++
        } else model.status = failure && model.attempts < maxAttempts ? "retrying" : "dead_lettered"
      }
    }
    await check(model, real)
  }
  toString = () => "runWorker"
}

class FailNext implements fc.AsyncCommand<Model, Real> {
  constructor(readonly retryable: boolean) {}
  check = () => true
  async run(model: Model, real: Real) {
    const log = await real.runtime.runPromise(RecordUpdaterMemoryLog)
    log.failNext.push(
      new RecordUpdateFailed({ message: "The record store is unavailable.", retryable: this.retryable })
    )
    model.failures.push(this.retryable)
    await check(model, real)
  }
  toString = () => `failNext(${this.retryable})`
}

class SetCredentials implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    await real.runtime.runPromise(Effect.flatMap(RecordActions, (a) => a.setCredentials(admin, "pat.token")))
    model.credentials = true
    if (model.status === "waiting_for_setup") model.status = "queued"
    await check(model, real)
  }
  toString = () => "setCredentials"
}

class Retry implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    const exit = await real.runtime.runPromiseExit(
      Effect.flatMap(Decisions, (d) => d.retryAction(admin, real.decisionId, real.actionId))
    )
    // Only a dead-lettered action may be retried; every other status is refused and changes nothing.
    assert.strictEqual(Exit.isSuccess(exit), model.status === "dead_lettered")
    if (model.status === "dead_lettered") model.status = "queued"
    await check(model, real)
  }
  toString = () => "retry"
}

const setUp = async (chooseActionOption: boolean): Promise<Real> => {
  const runtime = ManagedRuntime.make(stack()) as Runtime
  const ids = await runtime.runPromise(
    Effect.gen(function* () {
      const decisions = yield* Decisions
      const templates = yield* Templates
      yield* decisions.createRole(admin, { slug: "finance", name: "Finance" })
      yield* decisions.assign(admin, "finance", "ada@acme.test")
      const template = yield* templates.create(admin, {
        slug: "refund",
        name: "Refund",
        roleSlug: "finance",
        titleTemplate: "Refund {{order}}?",
        options: [
          {
            label: "Refund",
            action: {
              type: "record_update",
              baseId: "appAAAAAAAAAAAAAA",
              tableId: "tblBBBBBBBBBBBBBB",
              fields: { Status: "Refunded by {{resolvedBy}}" }
            }
          },
          { label: "Keep" }
        ]
      })
      const raised = yield* templates.raiseAsUser(admin, "refund", { order: "1042", recordId: "recAAAAAAAAAAAAAA" })
      const ada: WorkspaceUser = { organizationId: "acme", email: "ada@acme.test", isAdmin: false }
      const option = template.options[chooseActionOption ? 0 : 1]!.id
      const chosen = yield* decisions.choose(ada, raised.decision.id, { optionId: option })
      return { decisionId: chosen.decision.id, actionId: chosen.decision.actions![0]!.id }
    })
  )
  return { runtime, ...ids }
}

describe("record actions against a model (fc.commands over the worker, credentials and manual retry)", () => {
  it("the action's status, attempts and the records written always match the model: at most one write per trigger", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.boolean(),
        fc.commands(
          [
            fc.constant(new RunWorker()),
            fc.boolean().map((retryable) => new FailNext(retryable)),
            fc.constant(new SetCredentials()),
            fc.constant(new Retry())
          ],
          { maxCommands: 40, size: "large" }
        ),
        async (chooseActionOption, commands) => {
          const real = await setUp(chooseActionOption)
          const model: Model = {
            status: chooseActionOption ? "queued" : "not_triggered",
            attempts: 0,
            credentials: false,
            failures: [],
            updates: 0
          }
          try {
            await check(model, real)
            await fc.asyncModelRun(() => ({ model, real }), commands)
          } finally {
            await real.runtime.dispose()
          }
        }
      ),
      { numRuns: 150 }
    )
  })
})
