import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { FetchHttpClient } from "effect/http"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { AirtableClient, AirtableClientLive } from "../../adapters/airtable/AirtableClient.ts"
import { AirtableLimiterFromStore } from "../../adapters/airtable/AirtableLimiter.ts"
import { RecordUpdaterAirtableOn } from "../../adapters/airtable/RecordUpdaterAirtable.ts"
import { RecordUpdater } from "../../core/decisions/RecordUpdater.ts"
import { standInWithBase } from "../support/AirtableStore.ts"

describe("decisions' record updater on the Airtable limiter the task inbox uses", () => {
  it.live("after a 429 on a base, a record update to it is not sent: retryable, the base saw nothing", () =>
    Effect.gen(function* () {
      const { standIn, baseId, token } = yield* standInWithBase()
      // One client (and its limiter) for both, as the bundled server builds them.
      const client = AirtableClientLive({ endpointUrl: standIn.url }).pipe(
        Layer.provide(AirtableLimiterFromStore()),
        Layer.provide(RateLimiter.layerStoreMemory),
        Layer.provide(FetchHttpClient.layer)
      )
      const context = yield* Layer.build(Layer.provideMerge(RecordUpdaterAirtableOn, client))
      const airtable = Context.get(context, AirtableClient)
      const updater = Context.get(context, RecordUpdater)

      // The task inbox's read meets a 429: the base is paused.
      standIn.failNext.push({ status: 429, type: "RATE_LIMIT_REACHED" })
      const read = yield* Effect.flip(
        airtable.send(
          Redacted.make(token),
          baseId,
          { method: "GET", path: `${baseId}/Tasks`, idempotent: true },
          Schema.Unknown
        )
      )
      assert.strictEqual(read.status, 429)
      const sent = standIn.requests.length
      const failed = yield* Effect.flip(
        updater.update({
          token: Redacted.make(token),
          baseId,
          tableId: "tblAAAAAAAAAAAAAA",
          recordId: "recAAAAAAAAAAAAAA",
          fields: { Status: "Refunded" }
        })
      )
      assert.isTrue(failed.retryable)
      assert.strictEqual(failed.message, "The record store is rate limiting requests; the update will be retried.")
      assert.strictEqual(standIn.requests.length, sent)
    }).pipe(Effect.scoped)
  )
})
