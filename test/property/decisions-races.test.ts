import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Clock, Context, Effect, Layer, ManagedRuntime, Result } from "effect"
import type { OrganizationStatuses } from "../../core/events/OrganizationStatuses.ts"
import fc from "fast-check"
import { randomUUID } from "node:crypto"
import { decisionsMigrations } from "../../adapters/sql/decisions/migrations.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import { DecisionsDataSql } from "../../apps/server/decisions/DecisionsData.ts"
import { DecisionsDataMemory } from "../../apps/server/decisions/DecisionsLayers.ts"
import type { Decision } from "../../core/decisions/Decision.ts"
import { step, type Command } from "../../core/decisions/DecisionMachine.ts"
import { CallerAuthentication } from "../../core/decisions/CallerAuthentication.ts"
import { Decisions, type CallerIdentity, type WorkspaceUser } from "../../core/decisions/Decisions.ts"
import type { CallerKeyStore } from "../../core/decisions/CallerKeyStore.ts"
import type { DecisionSignals } from "../../core/decisions/DecisionSignals.ts"
import { DecisionStore } from "../../core/decisions/DecisionStore.ts"
import type { RoleStore } from "../../core/decisions/RoleStore.ts"
import type { WebhookStore } from "../../core/decisions/WebhookStore.ts"
import { webhookStatuses } from "../../core/decisions/WebhookDelivery.ts"
import { WebhookOutbox } from "../../core/decisions/WebhookOutbox.ts"
import { Webhooks } from "../../core/decisions/Webhooks.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"
import type { Transactions } from "../../core/kernel/Transactions.ts"
import type { ProducerOutbox } from "../../core/events/ProducerOutbox.ts"
import type { OrganizationAdmins } from "../../core/decisions/OrganizationAdmins.ts"
import { epochMs, isoAt } from "../../core/kernel/Timestamp.ts"
import { sqlBackends } from "../support/Databases.ts"
import { testWebhooks } from "../support/DecisionsMemory.ts"

/** Where a store call waits for its turn; outside a race every call goes at once. */
let turn: (label: string) => Promise<void> = () => Promise.resolve()

/**
 * The decision store with a turn before every read and write, so that fast-check's scheduler picks the order
 * in which racing moves reach it (a read of one between the read and the write of another).
 */
const takingTurns = (store: DecisionStore["Service"]): DecisionStore["Service"] => {
  const wait = (label: string) => Effect.promise(() => turn(label))
  return DecisionStore.of({
    ...store,
    get: (organizationId, id) => Effect.andThen(wait("get"), store.get(organizationId, id)),
    save: (next, expectedVersion, outbox) =>
      Effect.andThen(wait(`save ${next.status}`), store.save(next, expectedVersion, outbox)),
    due: (nowIso, limit) => Effect.andThen(wait("due"), store.due(nowIso, limit))
  })
}

/** The decisions use cases and webhook registration over `data`, their decision store taking turns. */
const racingStack = <E>(
  data: Layer.Layer<
    | DecisionStore
    | WebhookOutbox
    | RoleStore
    | CallerKeyStore
    | DecisionSignals
    | WebhookStore
    | ProducerOutbox
    | OrganizationAdmins
    | OrganizationStatuses
    | Transactions,
    E
  >
) =>
  Layer.mergeAll(Decisions.layer, CallerAuthentication.layer, testWebhooks).pipe(
    Layer.provideMerge(
      Layer.effectContext(
        Effect.map(Effect.context<DecisionStore>(), (context) =>
          Context.add(context, DecisionStore, takingTurns(Context.get(context, DecisionStore)))
        )
      )
    ),
    Layer.provideMerge(Layer.merge(data, IdGeneratorUlid))
  )

const memoryData = DecisionsDataMemory

const backends = [
  { name: "memory", stack: () => racingStack(memoryData), numRuns: 200 },
  ...sqlBackends.map((backend) => ({
    name: backend.name,
    stack: () =>
      racingStack(
        DecisionsDataSql.pipe(
          Layer.provideMerge(TransactionsSql),
          Layer.provide(migrationsLayer("decisions", decisionsMigrations)),
          Layer.provide(backend.layer)
        )
      ),
    numRuns: 40
  }))
]

/** A racing command: a decider's move (holders `a` and `b` of the role), the caller's, an admin's, or expiry. */
type Move =
  | { readonly _tag: "Choose"; readonly by: "a" | "b"; readonly optionId: "yes" | "no" }
  | { readonly _tag: "Decline"; readonly by: "a" | "b" }
  | { readonly _tag: "AskInfo"; readonly by: "a" | "b" }
  | { readonly _tag: "AnswerInfo" }
  | { readonly _tag: "Route"; readonly to: "a" | "c" }
  | { readonly _tag: "Cancel" }
  | { readonly _tag: "Expire" }

const decider = fc.constantFrom("a" as const, "b" as const)
const moveArb: fc.Arbitrary<Move> = fc.oneof(
  fc.record({
    _tag: fc.constant("Choose" as const),
    by: decider,
    optionId: fc.constantFrom("yes" as const, "no" as const)
  }),
  fc.record({ _tag: fc.constant("Decline" as const), by: decider }),
  fc.record({ _tag: fc.constant("AskInfo" as const), by: decider }),
  fc.constant({ _tag: "AnswerInfo" as const }),
  fc.record({ _tag: fc.constant("Route" as const), to: fc.constantFrom("a" as const, "c" as const) }),
  fc.constant({ _tag: "Cancel" as const }),
  fc.constant({ _tag: "Expire" as const })
)

const day = 86_400_000

/** The clock as the scheduler's sweep sees it: three days on, past every decision's `expiresAt`. */
const later = (clock: Clock.Clock): Clock.Clock => ({
  monotonicTimeNanosUnsafe: () => clock.monotonicTimeNanosUnsafe(),
  monotonicTimeNanos: clock.monotonicTimeNanos,
  sleep: (duration) => clock.sleep(duration),
  currentTimeMillisUnsafe: () => clock.currentTimeMillisUnsafe() + 3 * day,
  currentTimeMillis: Effect.map(clock.currentTimeMillis, (ms) => ms + 3 * day),
  currentTimeNanosUnsafe: () => clock.currentTimeNanosUnsafe() + BigInt(3 * day) * 1_000_000n,
  currentTimeNanos: Effect.map(clock.currentTimeNanos, (ns) => ns + BigInt(3 * day) * 1_000_000n)
})

describe.each(backends)("decisions move once per version under racing commands (property, $name)", (backend) => {
  let runtime: ManagedRuntime.ManagedRuntime<
    Decisions | CallerAuthentication | Webhooks | DecisionStore | WebhookOutbox,
    unknown
  >
  beforeAll(() => {
    runtime = ManagedRuntime.make(backend.stack())
  })
  afterAll(() => runtime.dispose())

  it("racing moves apply as some order of them one at a time: every success a step from the one before", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(moveArb, { minLength: 2, maxLength: 6 }),
        fc.boolean(),
        fc.boolean(),
        async (s, moves, withDefault, askedFirst) => {
          const org = `org_${randomUUID().slice(0, 8)}`
          const admin: WorkspaceUser = { organizationId: org, email: `admin@${org}.example`, isAdmin: true }
          const person = (who: "a" | "b" | "c"): WorkspaceUser => ({
            organizationId: org,
            email: `${who}@${org}.example`,
            isAdmin: false
          })
          const setup = Effect.gen(function* () {
            const decisions = yield* Decisions
            yield* decisions.createRole(admin, { slug: "ops", name: "Ops" })
            yield* decisions.assign(admin, "ops", person("a").email)
            yield* decisions.assign(admin, "ops", person("b").email)
            const caller = (yield* (yield* CallerAuthentication).authenticate(
              (yield* decisions.createKey(admin, "agent")).plaintext
            )) as CallerIdentity
            yield* (yield* Webhooks).register(caller, "http://127.0.0.1:9/hook")
            const now = yield* Clock.currentTimeMillis
            const created = yield* decisions.create(caller, {
              title: "Ship it?",
              roleSlug: "ops",
              options: [
                { id: "yes", label: "Yes", ...(withDefault ? { default: true } : {}) },
                { id: "no", label: "No" }
              ],
              expiresAt: isoAt(now + 2 * day)
            })
            const start = askedFirst
              ? (yield* decisions.askInfo(person("a"), created.decision.id, "Which one?")).decision
              : created.decision
            return { decisions, caller, start }
          })
          const { decisions, caller, start } = await runtime.runPromise(setup)
          const id = start.id

          /** The command each move ran, so that it can be replayed against the state it found. */
          const ran: Array<Command | undefined> = moves.map(() => undefined)
          const run = (move: Move, i: number) => {
            switch (move._tag) {
              case "Choose":
                ran[i] = { _tag: "Choose", actor: person(move.by).email, optionId: move.optionId }
                return Effect.map(decisions.choose(person(move.by), id, { optionId: move.optionId }), (v) => v.decision)
              case "Decline":
                ran[i] = { _tag: "Decline", actor: person(move.by).email }
                return Effect.map(decisions.decline(person(move.by), id, {}), (v) => v.decision)
              case "AskInfo":
                ran[i] = { _tag: "AskInfo", actor: person(move.by).email, infoRequestId: "replayed", question: "Q" }
                return Effect.map(decisions.askInfo(person(move.by), id, "Q"), (v) => v.decision)
              case "AnswerInfo":
                return Effect.gen(function* () {
                  // The caller answers the question it last saw open.
                  const seen = (yield* decisions.get(org, id)).decision.infoRequests
                  const infoRequestId = seen.at(-1)?.id ?? "no_question"
                  ran[i] = { _tag: "AnswerInfo", infoRequestId, answer: "A" }
                  return (yield* decisions.answerInfo(caller, id, { infoRequestId, answer: "A" })).decision
                })
              case "Route":
                ran[i] = { _tag: "Route", actor: admin.email, toEmail: person(move.to).email }
                return Effect.map(decisions.route(admin, id, { toEmail: person(move.to).email }), (v) => v.decision)
              case "Cancel":
                ran[i] = { _tag: "Cancel" }
                return Effect.map(decisions.cancel(caller, id), (v) => v.decision)
              case "Expire":
                ran[i] = { _tag: "Expire" }
                return Effect.map(
                  Effect.updateService(decisions.expireDue(), Clock.Clock, later),
                  (): Decision | undefined => undefined
                )
            }
          }
          const race = Effect.forEach(moves, (move, i) => Effect.result(run(move, i)), { concurrency: "unbounded" })
          turn = (label) => s.schedule(Promise.resolve(), label)
          const outcomes = await s.waitFor(runtime.runPromise(race)).finally(() => {
            turn = () => Promise.resolve()
          })

          const final = await runtime.runPromise(
            Effect.gen(function* () {
              const store = yield* DecisionStore
              const stored = (yield* store.get(org, id))!
              // Left open, it is closed now, so that no later run's sweep finds it due.
              const leftOpen = stored.status === "pending" || stored.status === "needs_info"
              if (leftOpen) yield* decisions.cancel(caller, id)
              const deliveries = yield* (yield* WebhookOutbox).list(org, { limit: 100 })
              return {
                stored,
                leftOpen,
                deliveries: deliveries.filter((d) => d.decisionId === id).map((d) => d.eventType)
              }
            })
          )

          // Refusals are the machine's or the rules' answers, never anything else.
          for (const outcome of outcomes) {
            if (Result.isFailure(outcome)) {
              assert.oneOf(outcome.failure._tag, ["InvalidTransition", "ValidationError", "Forbidden"])
            }
          }
          // Each success wrote one version: the versions written are distinct and account for every change.
          const expired = final.stored.status === "expired"
          const written = outcomes.flatMap((outcome, i) =>
            Result.isSuccess(outcome) && outcome.success !== undefined ? [{ decision: outcome.success, i }] : []
          )
          written.sort((x, y) => x.decision.version - y.decision.version)
          assert.deepStrictEqual(
            written.map((w) => w.decision.version),
            written.map((_, k) => start.version + k + 1),
            "versions written by the successful moves"
          )
          assert.strictEqual(final.stored.version, start.version + written.length + (expired ? 1 : 0))
          const last = expired ? undefined : (written.at(-1)?.decision ?? start)
          if (last !== undefined) {
            assert.strictEqual(final.stored.status, last.status)
            assert.deepStrictEqual(final.stored.resolution, last.resolution)
          }

          // Replayed one at a time in the order of their versions, each success is a step of the machine from
          // the state the one before left, to the state it answered; expiry, if it happened, came last.
          const expected: Array<string> = askedFirst ? ["decision.needs_info"] : []
          let state = start
          const after = (next: Decision) => {
            if (next.status !== state.status && webhookStatuses.includes(next.status)) {
              expected.push(`decision.${next.status}`)
            }
            state = next
          }
          for (const { decision, i } of written) {
            const replayed = step(state, ran[i]!, epochMs(decision.updatedAt))
            assert.isTrue(Result.isSuccess(replayed), `${moves[i]!._tag} from ${state.status}`)
            if (Result.isSuccess(replayed)) {
              assert.strictEqual(replayed.success.decision.status, decision.status)
              assert.deepStrictEqual(replayed.success.decision.resolution, decision.resolution)
              assert.strictEqual(replayed.success.decision.directAssigneeEmail, decision.directAssigneeEmail)
            }
            after(decision)
          }
          if (expired) {
            assert.isTrue(moves.some((m) => m._tag === "Expire"))
            const replayed = step(state, { _tag: "Expire" }, epochMs(start.expiresAt!) + day)
            assert.isTrue(Result.isSuccess(replayed), `Expire from ${state.status}`)
            if (Result.isSuccess(replayed)) {
              assert.strictEqual(replayed.success.decision.status, "expired")
              assert.deepStrictEqual(replayed.success.decision.resolution, final.stored.resolution)
            }
            after(final.stored)
          }
          // One webhook delivery per change of status that the outbox announces, none for a move that lost.
          if (final.leftOpen) expected.push("decision.cancelled")
          assert.deepStrictEqual([...final.deliveries].sort(), [...expected].sort())
        }
      ),
      { numRuns: backend.numRuns }
    )
  }, 180_000)
})
