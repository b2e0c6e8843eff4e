import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { RecordUpdaterAirtable } from "../../adapters/airtable/RecordUpdaterAirtable.ts"
import { RecordUpdater } from "../../core/decisions/RecordUpdater.ts"
import { startAirtableStandIn } from "../fakes/AirtableStandIn.ts"

const baseId = "appAAAAAAAAAAAAAA"
const tableId = "tblBBBBBBBBBBBBBB"
const token = "patToken.0123456789"

describe("record actions never leave the record's path (the record store over HTTP, a local stand-in)", () => {
  it.live("an id that is not a record store id is a permanent failure, and nothing is sent", () =>
    Effect.gen(function* () {
      const standIn = yield* Effect.acquireRelease(
        Effect.promise(() =>
          startAirtableStandIn({
            tokens: [token],
            bases: { [baseId]: { [tableId]: { fields: ["Status"], records: { recAAAAAAAAAAAAAA: {} } } } }
          })
        ),
        (s) => Effect.promise(() => s.close())
      )
      const update = (ids: { baseId?: string; tableId?: string; recordId: string }) =>
        RecordUpdater.use((updater) =>
          updater.update({ token: Redacted.make(token), baseId, tableId, fields: { Status: "Done" }, ...ids })
        ).pipe(Effect.provide(RecordUpdaterAirtable({ endpointUrl: standIn.url })), Effect.flip)

      for (const ids of [
        { recordId: "." },
        { recordId: ".." },
        { recordId: "recAAAAAAAAAAAAAA/.." },
        { recordId: "recAAAAAAAAAAAAAA?x=1" },
        { recordId: "recAAAAAAAAAAAAAA", tableId: ".." },
        { recordId: "recAAAAAAAAAAAAAA", baseId: "%2e%2e" }
      ]) {
        const failure = yield* update(ids)
        assert.strictEqual(failure.retryable, false, JSON.stringify(ids))
      }
      assert.deepStrictEqual(standIn.requests, [])

      yield* RecordUpdater.use((updater) =>
        updater.update({
          token: Redacted.make(token),
          baseId,
          tableId,
          recordId: "recAAAAAAAAAAAAAA",
          fields: { Status: "Done" }
        })
      ).pipe(Effect.provide(RecordUpdaterAirtable({ endpointUrl: standIn.url })))
      assert.deepStrictEqual(
        standIn.requests.map((r) => [r.method, r.path]),
        [["PATCH", `/v0/${baseId}/${tableId}/recAAAAAAAAAAAAAA`]]
      )
    }).pipe(Effect.scoped)
  )
})
