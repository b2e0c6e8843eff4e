import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer } from "effect"
import { decisionsMigrations } from "../../adapters/sql/decisions/migrations.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import { DecisionsOutboxSql } from "../../apps/server/decisions/DecisionsData.ts"
import { ProducerOutbox, type ProducerEvent } from "../../core/events/ProducerOutbox.ts"
import { Transactions } from "../../core/kernel/Transactions.ts"
import { sqlBackends } from "../support/Databases.ts"
import { instanceOn, twoWaysIn } from "../support/TwoInstances.ts"

/**
 * The relay sleeps in `awaitEnqueued` between passes: an event enqueued in a unit of work wakes it once the
 * unit commits (not before, and not at all for a unit undone), and on a Postgres server a relay of another
 * instance as well. The waits here are an hour long, so only a wake-up ends them within the test's time.
 */

const hour = 3_600_000

const event = (id: string): ProducerEvent => ({
  id,
  type: "decisions.notification.created",
  service: "decisions",
  occurredAt: new Date().toISOString(),
  subject: { email: "ann@acme.test", companyId: "acme" },
  data: { title: "Refund?" },
  contractVersion: "v1"
})

const instance = Layer.merge(DecisionsOutboxSql, TransactionsSql)

/** Whether a fiber has ended, after giving the runtime `millis` to deliver what it might. */
const endedAfter = (fiber: Fiber.Fiber<unknown, unknown>, millis: number) =>
  Effect.map(Effect.sleep(millis), () => fiber.pollUnsafe() !== undefined)

for (const backend of sqlBackends) {
  describe(`the producer outbox wakes its relays after commit (${backend.name})`, () => {
    it.live(
      "wakes this instance's relay when the unit commits, never before, and not for a unit undone",
      () =>
        Effect.scoped(
          Effect.gen(function* () {
            const { first } = yield* twoWaysIn(backend, migrationsLayer("decisions", decisionsMigrations))
            const a = yield* instanceOn(instance, first)
            const outbox = Context.get(a, ProducerOutbox)
            const transactions = Context.get(a, Transactions)
            // A Postgres instance opens its wake-up once it listens (what was enqueued before is due anyway).
            yield* outbox.awaitEnqueued(backend.name === "postgres" ? 10_000 : 1)

            const undone = yield* Effect.forkChild(outbox.awaitEnqueued(hour))
            yield* Effect.flip(
              transactions.atomically(Effect.andThen(outbox.enqueue(event("E1")), Effect.fail("undo")))
            )
            assert.isFalse(yield* endedAfter(undone, 300), "a unit undone wakes nobody")
            yield* Fiber.interrupt(undone)

            const waiting = yield* Effect.forkChild(outbox.awaitEnqueued(hour))
            yield* transactions.atomically(
              Effect.gen(function* () {
                yield* outbox.enqueue(event("E2"))
                assert.isFalse(yield* endedAfter(waiting, 300), "woken before the commit")
              })
            )
            yield* Fiber.join(waiting).pipe(Effect.timeout("10 seconds"))

            // The same event again adds nothing, and wakes nobody.
            const again = yield* Effect.forkChild(outbox.awaitEnqueued(hour))
            yield* transactions.atomically(outbox.enqueue(event("E2")))
            assert.isFalse(yield* endedAfter(again, 300), "a repeat woke the relay")
            yield* Fiber.interrupt(again)
          })
        ),
      60_000
    )

    if (backend.name === "postgres") {
      it.live(
        "wakes another instance's relay through the database, at commit",
        () =>
          Effect.scoped(
            Effect.gen(function* () {
              const { first, second } = yield* twoWaysIn(backend, migrationsLayer("decisions", decisionsMigrations))
              const a = yield* instanceOn(instance, first)
              const b = yield* instanceOn(instance, second)
              const writer = Context.get(a, ProducerOutbox)
              const relay = Context.get(b, ProducerOutbox)
              yield* relay.awaitEnqueued(10_000)

              const waiting = yield* Effect.forkChild(relay.awaitEnqueued(hour))
              yield* Context.get(a, Transactions).atomically(
                Effect.gen(function* () {
                  yield* writer.enqueue(event("E3"))
                  assert.isFalse(yield* endedAfter(waiting, 300), "woken before the commit")
                })
              )
              yield* Fiber.join(waiting).pipe(Effect.timeout("10 seconds"))
              const [due] = yield* relay.claimDue(
                new Date().toISOString(),
                new Date(Date.now() + 60_000).toISOString(),
                10
              )
              assert.strictEqual(due?.event.id, "E3")
            })
          ),
        60_000
      )
    }
  })
}
