import { Effect, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { afterEach, assert, describe, it } from "vitest"
import { ensureBase } from "../../adapters/airtable/AirtableBase.ts"
import { airtableTables } from "../../adapters/airtable/AirtableFields.ts"
import { AirtableLimiterFromStore } from "../../adapters/airtable/AirtableLimiter.ts"
import { newBaseId, startAirtableStandIn, type AirtableStandIn } from "../fakes/AirtableStandIn.ts"
import { startServer, tempDataDir, type RunningServer, runSeed } from "../support/ServerProcess.ts"

const running: Array<RunningServer> = []
const standIns: Array<AirtableStandIn> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
  await Promise.all(standIns.splice(0).map((s) => s.close()))
})

const token = "patServerTest.0123456789abcdef"

const setUp = (standIn: AirtableStandIn, baseId: string) =>
  Effect.runPromise(
    ensureBase({ endpointUrl: standIn.url, baseId, token: Redacted.make(token) }, airtableTables()).pipe(
      Effect.provide(
        Layer.merge(AirtableLimiterFromStore().pipe(Layer.provide(RateLimiter.layerStoreMemory)), FetchHttpClient.layer)
      )
    )
  )

describe("the bundled server with TASKS_RECORD_STORE=airtable (a real process, a stand-in base)", () => {
  it("refuses to start on a base without the task inbox's tables, naming them; after the setup, seed and serve from the base", async () => {
    const baseId = newBaseId()
    const standIn = await startAirtableStandIn({ tokens: [token], bases: { [baseId]: {} } })
    standIns.push(standIn)
    const env = {
      DATA_DIR: tempDataDir(),
      TASKS_RECORD_STORE: "airtable",
      AIRTABLE_ENDPOINT_URL: standIn.url,
      AIRTABLE_BASE_ID: baseId,
      AIRTABLE_TOKEN: token
    }

    const refused = await startServer(env, { waitReady: false })
    running.push(refused)
    assert.notStrictEqual(await refused.exited, 0)
    assert.include(refused.output(), "missing tables: Tasks, Projects")
    assert.include(refused.output(), "npm run airtable:setup")
    assert.notInclude(refused.output(), token)

    await setUp(standIn, baseId)
    const seeded = await runSeed(env)
    assert.strictEqual(seeded.code, 0, seeded.output)
    assert.include(seeded.output, "Demo data loaded")
    const line = seeded.output.split("\n").find((l) => l.includes("alice@demo.example.com"))
    const key = line?.match(/tsk_[A-Za-z0-9_-]{43}/)?.[0]
    assert.isDefined(key, seeded.output)

    const server = await startServer(env)
    running.push(server)
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`http://127.0.0.1:${server.ports.tasks}${path}`, {
        method,
        headers: { "x-api-key": key!, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      return { status: response.status, json: (await response.json()) as any }
    }
    const inbox = (await call("GET", "/api/tasks")).json.tasks
    assert.lengthOf(inbox, 3)
    const project = (await call("GET", "/api/projects?q=acme")).json.projects[0]
    const accepted = await call("POST", `/api/tasks/${inbox[0].id}/accept`, { projectId: project.id })
    assert.strictEqual(accepted.status, 200)
    assert.strictEqual(accepted.json.task.triageStatus, "Accepted")
    assert.lengthOf((await call("GET", "/api/tasks")).json.tasks, 2)

    // The records are the base's.
    const tasks = [...standIn.table(baseId, "Tasks").records.values()]
    assert.include(
      tasks.map((t) => t.fields["Title"]),
      inbox[0].title
    )
    const stored = tasks.find((t) => t.id === inbox[0].id)!
    assert.strictEqual(stored.fields["Triage Status"], "Accepted")
    // Never more than 5 requests in a second, nor a 429, from the setup, the seed and the server alike.
    assert.isAtMost(standIn.busiestSecond(baseId), 5)
    assert.deepStrictEqual(
      standIn.requests.filter((r) => r.status === 429).map((r) => `${r.method} ${r.path}`),
      []
    )
  }, 240_000)
})
