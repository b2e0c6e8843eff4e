import { Effect, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { afterAll, assert, describe, it } from "vitest"
import { ensureBase } from "../../adapters/airtable/AirtableBase.ts"
import { airtableTables } from "../../adapters/airtable/AirtableFields.ts"
import { AirtableLimiterFromStore } from "../../adapters/airtable/AirtableLimiter.ts"
import { newBaseId, startAirtableStandIn, type AirtableStandIn } from "../fakes/AirtableStandIn.ts"
import { webTasksWalkThrough } from "../support/WebTasksWalkThrough.ts"

/**
 * The same clicks as test/e2e/web-tasks.test.ts with TASKS_RECORD_STORE=airtable: the task inbox's records in a
 * base of the Airtable stand-in (Airtable's limits kept: 5 requests a second per base, 429 past that), set up as
 * a user does (the setup, then the seed), the web app unchanged. Then the base holds what was clicked, and it
 * never saw more than 5 requests in a second nor a 429.
 */

const token = "patWebTasks.0123456789abcdef"
const baseId = newBaseId()
let standIn: AirtableStandIn | undefined

afterAll(async () => {
  await standIn?.close()
})

webTasksWalkThrough({
  name: "on an Airtable base",
  env: async () => {
    standIn = await startAirtableStandIn({ tokens: [token], bases: { [baseId]: {} } })
    // npm run airtable:setup: the tables and fields the task inbox needs, through the metadata API.
    await Effect.runPromise(
      ensureBase({ endpointUrl: standIn.url, baseId, token: Redacted.make(token) }, airtableTables()).pipe(
        Effect.provide(
          Layer.merge(
            AirtableLimiterFromStore().pipe(Layer.provide(RateLimiter.layerStoreMemory)),
            FetchHttpClient.layer
          )
        )
      )
    )
    return {
      TASKS_RECORD_STORE: "airtable",
      AIRTABLE_ENDPOINT_URL: standIn.url,
      AIRTABLE_BASE_ID: baseId,
      AIRTABLE_TOKEN: token
    }
  },
  setUpMillis: 300_000,
  stepMillis: 180_000
})

describe("the Airtable base after the walk-through", () => {
  it("holds the tasks made and changed in the browser, and was never sent more than 5 requests in a second", () => {
    const tasks = [...standIn!.table(baseId, "Tasks").records.values()]
    const byTitle = (title: string) => tasks.find((task) => task.fields["Title"] === title)
    assert.strictEqual(byTitle("Check the relaunch analytics")?.fields["Triage Status"], "Accepted")
    assert.strictEqual(byTitle("Ask Acme for the logo files")?.fields["Triage Status"], "Needs More Info")
    for (const title of ["Bulk one", "Bulk two"])
      assert.strictEqual(byTitle(title)?.fields["Triage Status"], "Rejected")
    assert.isAtMost(standIn!.busiestSecond(baseId), 5)
    assert.deepStrictEqual(
      standIn!.requests.filter((request) => request.status === 429).map((r) => `${r.method} ${r.path}`),
      []
    )
  })
})
