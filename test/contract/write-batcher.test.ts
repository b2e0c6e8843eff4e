import { assert, describe, layer } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { monotonicFactory } from "ulid"
import { EventStoreSql } from "../../adapters/sql/hub/EventStoreSql.ts"
import { makeWriteBatcher } from "../../adapters/sql/WriteBatcher.ts"
import { EventStore, type NewEvent } from "../../core/hub/EventStore.ts"
import { sqlBackendsBothWays } from "../support/Databases.ts"
import { hubEventsSqlOn } from "../support/HubEvents.ts"

const ulid = monotonicFactory()

/** A table of its own per test: `v` must not be negative, so one bad item makes its statement fail. */
const freshTable = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const name = `batched_${ulid().toLowerCase()}`
  yield* sql`CREATE TABLE ${sql(name)} (id text PRIMARY KEY, v integer NOT NULL CHECK (v >= 0))`
  return name
})

interface Item {
  readonly id: string
  readonly v: number
}

/**
 * A batcher over `table` that records every statement's items and, for a batch holding `hold`, waits for
 * `release` after its insert (the statement is running: nothing is committed yet).
 */
const batcherOn = (table: string, options: { readonly hold?: string; readonly release?: Deferred.Deferred<void> }) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const batches: Array<ReadonlyArray<string>> = []
    const insert = yield* makeWriteBatcher<Item, "new" | "duplicate">({
      maxInFlight: 1,
      write: (items) =>
        Effect.gen(function* () {
          batches.push(items.map((item) => item.id))
          if (options.hold !== undefined && items.some((item) => item.id === options.hold)) {
            yield* Deferred.await(options.release!)
          }
          const rows = yield* sql<{ readonly id: string }>`
            INSERT INTO ${sql(table)} (id, v)
            SELECT i.id, i.v FROM jsonb_to_recordset(${JSON.stringify(items)}::jsonb) AS i(id text, v integer)
            ON CONFLICT (id) DO NOTHING RETURNING id`
          const inserted = new Set(rows.map((row) => row.id))
          return items.map((item) => (inserted.has(item.id) ? ("new" as const) : ("duplicate" as const)))
        })
    })
    return { insert, batches }
  })

const storedIds = (table: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ readonly id: string }>`SELECT id FROM ${sql(table)} ORDER BY id`
    return rows.map((row) => row.id)
  })

/** Lets forked fibers run until they wait on something. */
const settle = Effect.yieldNow.pipe(Effect.repeat({ times: 20 }))

for (const backend of sqlBackendsBothWays) {
  layer(Layer.merge(backend.layer, hubEventsSqlOn(EventStoreSql, backend)), { timeout: "60 seconds" })(
    `write batcher (${backend.name})`,
    (it) => {
      describe("makeWriteBatcher", () => {
        it.effect("writes that arrive while a statement runs go together in the next one", () =>
          Effect.scoped(
            Effect.gen(function* () {
              const table = yield* freshTable
              const release = yield* Deferred.make<void>()
              const { insert, batches } = yield* batcherOn(table, { hold: "a", release })
              const first = yield* Effect.forkChild(insert({ id: "a", v: 1 }))
              yield* settle
              const rest = yield* Effect.forkChild(
                Effect.forEach(["b", "c", "d"], (id) => insert({ id, v: 1 }), { concurrency: "unbounded" })
              )
              yield* settle
              yield* Deferred.succeed(release, undefined)
              assert.strictEqual(yield* Fiber.join(first), "new")
              assert.deepStrictEqual(yield* Fiber.join(rest), ["new", "new", "new"])
              assert.deepStrictEqual(batches, [["a"], ["b", "c", "d"]])
              assert.deepStrictEqual(yield* storedIds(table), ["a", "b", "c", "d"])
            })
          )
        )

        it.effect("no caller is answered before its statement has committed", () =>
          Effect.scoped(
            Effect.gen(function* () {
              const table = yield* freshTable
              const release = yield* Deferred.make<void>()
              const { insert } = yield* batcherOn(table, { hold: "a", release })
              const first = yield* Effect.forkChild(insert({ id: "a", v: 1 }))
              yield* settle
              // The statement is held before it runs: the caller is waiting, nothing is stored.
              assert.isUndefined(first.pollUnsafe())
              assert.deepStrictEqual(yield* storedIds(table), [])
              yield* Deferred.succeed(release, undefined)
              assert.strictEqual(yield* Fiber.join(first), "new")
              // Answered: the row is visible to any other statement (committed).
              assert.deepStrictEqual(yield* storedIds(table), ["a"])
            })
          )
        )

        it.effect("a failed statement fails none silently: each item is written again alone", () =>
          Effect.scoped(
            Effect.gen(function* () {
              const table = yield* freshTable
              const release = yield* Deferred.make<void>()
              const { insert, batches } = yield* batcherOn(table, { hold: "a", release })
              const first = yield* Effect.forkChild(insert({ id: "a", v: 1 }))
              yield* settle
              const rest = yield* Effect.forkChild(
                Effect.forEach(
                  [
                    { id: "b", v: 1 },
                    { id: "bad", v: -1 },
                    { id: "c", v: 1 },
                    { id: "a", v: 1 }
                  ],
                  (item) => Effect.exit(insert(item)),
                  { concurrency: "unbounded" }
                )
              )
              yield* settle
              yield* Deferred.succeed(release, undefined)
              assert.strictEqual(yield* Fiber.join(first), "new")
              const [b, bad, c, again] = yield* Fiber.join(rest)
              assert.deepStrictEqual(b, Exit.succeed("new"))
              assert.deepStrictEqual(c, Exit.succeed("new"))
              assert.deepStrictEqual(again, Exit.succeed("duplicate"))
              assert.isTrue(Exit.isFailure(bad!) && Cause.hasDies(bad.cause), "the bad item's caller fails")
              assert.deepStrictEqual(batches, [["a"], ["b", "bad", "c", "a"], ["b"], ["bad"], ["c"], ["a"]])
              assert.deepStrictEqual(yield* storedIds(table), ["a", "b", "c"])
            })
          )
        )

        it.effect("inside a transaction a write is never batched: it is undone with the transaction", () =>
          Effect.scoped(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              const table = yield* freshTable
              const { insert, batches } = yield* batcherOn(table, {})
              const undone = yield* sql
                .withTransaction(Effect.andThen(insert({ id: "x", v: 1 }), Effect.fail("undo" as const)))
                .pipe(Effect.flip)
              assert.strictEqual(undone, "undo")
              assert.deepStrictEqual(batches, [["x"]])
              assert.deepStrictEqual(yield* storedIds(table), [])
              assert.strictEqual(yield* insert({ id: "x", v: 1 }), "new")
            })
          )
        )
      })

      describe("EventStoreSql", () => {
        it.effect("the deliveries of one event within one batch: one is new, the others duplicates", () =>
          Effect.gen(function* () {
            const store = yield* EventStore
            const event: NewEvent = {
              service: "acme",
              id: ulid(),
              type: "acme.report.generated",
              occurredAt: "2026-01-31T12:00:00Z",
              subject: { email: "ada@example.com" },
              data: { n: 1 },
              deliveryId: "d-1",
              receivedAt: "2040-01-01T00:00:00.000Z"
            }
            const others = Array.from({ length: 40 }, () => ({ ...event, id: ulid() }))
            const deliveries = [
              ...Array.from({ length: 40 }, (_, n) => ({ ...event, deliveryId: `d-${n}` })),
              ...others
            ]
            const outcomes = yield* Effect.forEach(deliveries, (delivery) => store.insert(delivery), {
              concurrency: "unbounded"
            })
            assert.strictEqual(outcomes.slice(0, 40).filter((o) => o === "new").length, 1)
            assert.deepStrictEqual(
              outcomes.slice(40),
              others.map(() => "new")
            )
            const stored = yield* store.find(event.service, event.id)
            assert.strictEqual(stored?.status, "accepted")
            assert.deepStrictEqual(stored?.data, { n: 1 })
          })
        )
      })
    }
  )
}
