import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Fiber, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { decisionsMigrations } from "../../adapters/sql/decisions/migrations.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import { DecisionsDataSql } from "../../apps/server/decisions/DecisionsData.ts"
import { DecisionsDataMemory } from "../../apps/server/decisions/DecisionsLayers.ts"
import { CallerAuthentication } from "../../core/decisions/CallerAuthentication.ts"
import { Decisions, type CallerIdentity, type WorkspaceUser } from "../../core/decisions/Decisions.ts"
import { DecisionStore } from "../../core/decisions/DecisionStore.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"
import { Transactions } from "../../core/kernel/Transactions.ts"
import { sqlBackends } from "../support/Databases.ts"

/** How many times the decision store was asked for one decision, over the whole layer. */
class DecisionReads extends Context.Service<DecisionReads, { count: number }>()("test/DecisionReads") {}

/** The decisions use cases over `data`, their decision store counting its reads of one decision. */
const countingReads = <E>(data: Layer.Layer<Layer.Success<typeof memoryData>, E>) =>
  Layer.merge(Decisions.layer, CallerAuthentication.layer).pipe(
    Layer.provideMerge(
      Layer.effectContext(
        Effect.map(Effect.context<DecisionStore>(), (context) => {
          const store = Context.get(context, DecisionStore)
          const reads = { count: 0 }
          return Context.add(
            Context.add(context, DecisionReads, reads),
            DecisionStore,
            DecisionStore.of({
              ...store,
              get: (organizationId, id) =>
                Effect.suspend(() => {
                  reads.count++
                  return store.get(organizationId, id)
                })
            })
          )
        })
      )
    ),
    Layer.provideMerge(data)
  )

const memoryData = Layer.merge(DecisionsDataMemory, IdGeneratorUlid)

const backends = [
  { name: "memory", stack: countingReads(memoryData) },
  ...sqlBackends.map((backend) => ({
    name: `sql on ${backend.name}`,
    stack: countingReads(
      Layer.merge(DecisionsDataSql, IdGeneratorUlid).pipe(
        Layer.provideMerge(TransactionsSql),
        Layer.provide(migrationsLayer("decisions", decisionsMigrations)),
        Layer.provide(backend.layer)
      )
    )
  }))
]

/** A fresh organization with a role, its holder and a caller key. */
const organization = Effect.gen(function* () {
  const decisions = yield* Decisions
  const org = `org_${randomUUID().slice(0, 8)}`
  const admin: WorkspaceUser = { organizationId: org, email: `admin@${org}.example`, isAdmin: true }
  yield* decisions.createRole(admin, { slug: "ops", name: "Ops" })
  yield* decisions.assign(admin, "ops", admin.email)
  const key = yield* decisions.createKey(admin, "agent")
  const caller = (yield* (yield* CallerAuthentication).authenticate(key.plaintext)) as CallerIdentity
  return { admin, caller }
})

const waiters = 40

/**
 * Starts `n` long-polls on a decision and returns once each holds on from its first read: a wait of 0
 * started after them is answered with a read of the decision that answers their first reads as well.
 */
const holdingPolls = (organizationId: string, id: string, n: number) =>
  Effect.gen(function* () {
    const decisions = yield* Decisions
    const polls = yield* Effect.forEach(Array.from({ length: n }), () =>
      Effect.forkChild(decisions.waitForChange(organizationId, id, 60), { startImmediately: true })
    )
    yield* decisions.waitForChange(organizationId, id, 0)
    return polls
  })

for (const backend of backends) {
  describe(`decision long-polls (${backend.name})`, () =>
    layer(backend.stack, { excludeTestServices: true })((it) => {
      it.effect("many long-polls on one decision: a change costs one more read of it, not one per waiter", () =>
        Effect.gen(function* () {
          const decisions = yield* Decisions
          const reads = yield* DecisionReads
          const { admin, caller } = yield* organization
          const { decision } = yield* decisions.create(caller, {
            title: "T",
            roleSlug: "ops",
            options: [{ label: "A" }]
          })
          const polls = yield* holdingPolls(caller.organizationId, decision.id, waiters)
          const before = reads.count
          yield* decisions.choose(admin, decision.id, { optionId: decision.options[0]!.id })
          const answers = yield* Effect.forEach(polls, Fiber.join)

          assert.deepStrictEqual(new Set(answers.map((a) => a.decision.status)), new Set(["resolved"]))
          // The move reads the decision once, then the waiters' watch reads it once for all of them.
          assert.strictEqual(reads.count - before, 2)
        })
      )

      it.effect("a move inside a unit of work wakes every long-poll once it commits, with the moved decision", () =>
        Effect.gen(function* () {
          const decisions = yield* Decisions
          const { atomically } = yield* Transactions
          const { admin, caller } = yield* organization
          const { decision } = yield* decisions.create(caller, {
            title: "T",
            roleSlug: "ops",
            options: [{ label: "A" }]
          })
          const polls = yield* holdingPolls(caller.organizationId, decision.id, 5)
          yield* atomically(decisions.choose(admin, decision.id, { optionId: decision.options[0]!.id }))
          for (const answer of yield* Effect.forEach(polls, Fiber.join)) {
            assert.strictEqual(answer.decision.status, "resolved")
            assert.strictEqual(answer.decision.resolution?.optionId, decision.options[0]!.id)
          }
        })
      )

      it.effect("another organization's long-poll fails as for a missing decision; the owner's is unaffected", () =>
        Effect.gen(function* () {
          const decisions = yield* Decisions
          const owner = yield* organization
          const stranger = yield* organization
          const { decision } = yield* decisions.create(owner.caller, {
            title: "T",
            roleSlug: "ops",
            options: [{ label: "A" }]
          })
          const [poll] = yield* holdingPolls(owner.caller.organizationId, decision.id, 1)
          const theirs = yield* Effect.flip(decisions.waitForChange(stranger.caller.organizationId, decision.id, 60))
          const missing = yield* Effect.flip(decisions.waitForChange(stranger.caller.organizationId, "nope", 60))
          assert.strictEqual(theirs._tag, "NotFound")
          assert.deepStrictEqual(theirs, missing)
          yield* decisions.cancel(owner.caller, decision.id)
          assert.strictEqual((yield* Fiber.join(poll!)).decision.status, "cancelled")
        })
      )
    }))
}
