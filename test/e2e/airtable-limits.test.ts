import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { RecordStore } from "../../core/tasks/RecordStore.ts"
import { TaskAccess } from "../../core/tasks/TaskAccess.ts"
import type { AirtableStandIn } from "../fakes/AirtableStandIn.ts"
import { pglite } from "../support/Databases.ts"
import { request } from "../support/Http.ts"
import { tasksAirtableData, tasksServer, TasksServer } from "../support/TasksStack.ts"

/** The stand-in behind the task inbox, with Airtable's limits on both sides. */
const seen: { standIn?: AirtableStandIn; baseId?: string } = {}
const data = tasksAirtableData(pglite, {
  limits: true,
  onStart: (standIn, baseId) => Object.assign(seen, { standIn, baseId })
})

/** A person with an API key, and a call of the task inbox as them. */
const someone = Effect.gen(function* () {
  const { baseUrl } = yield* TasksServer
  const records = yield* RecordStore
  const access = yield* TaskAccess
  const email = `someone.${randomUUID().slice(0, 8)}@example.com`
  const person = yield* records.create("collaborators", { email, name: "Someone" })
  const user = { id: person.id, email, name: "Someone" }
  const { key } = yield* access.createApiKey(user, "tests")
  const call = (method: string, path: string, body?: unknown) =>
    request(`${baseUrl}${path}`, {
      method,
      headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  return { user, call }
})

const tasksTable = (path: string) => path.split("?")[0]!.endsWith("/Tasks")

describe("the task inbox within an Airtable base's limits", () =>
  layer(tasksServer(data), { excludeTestServices: true, timeout: 120_000 })((it) => {
    it.effect("bulk triage of 50 tasks writes them 10 a request: 5 updates, never over 5 requests a second", () =>
      Effect.gen(function* () {
        const { user, call } = yield* someone
        const records = yield* RecordStore
        const standIn = seen.standIn!
        const before = standIn.requests.length
        const tasks = yield* Effect.forEach(
          Array.from({ length: 50 }, (_, i) => i),
          (i) => records.create("tasks", { title: `Bulk ${i}`, assignedTo: [user.id], requestedBy: [user.id] }),
          { concurrency: 10 }
        )
        const creates = standIn.requests.slice(before).filter((r) => r.method === "POST" && tasksTable(r.path))
        assert.lengthOf(creates, 5)
        const sent = standIn.requests.length
        const answer = yield* call("POST", "/api/tasks/bulk", { taskIds: tasks.map((t) => t.id), action: "done" })
        assert.strictEqual(answer.status, 200, answer.text)
        assert.lengthOf(answer.json.successful, 50)
        const updates = standIn.requests.slice(sent).filter((r) => r.method === "PATCH" && tasksTable(r.path))
        assert.lengthOf(updates, 5)
        for (const update of updates) assert.lengthOf((update.body as { records: Array<unknown> }).records, 10)
        assert.isAtMost(standIn.busiestSecond(seen.baseId!), 5)
        assert.deepStrictEqual(
          standIn.requests.filter((r) => r.status === 429),
          []
        )
      })
    )

    it.effect("a base answering 502 is asked 3 times, then the task inbox answers 502 with a safe message", () =>
      Effect.gen(function* () {
        const { call } = yield* someone
        const standIn = seen.standIn!
        standIn.failNext.push({ status: 502 }, { status: 502 }, { status: 502 })
        const sent = standIn.requests.length
        const answer = yield* call("GET", "/api/tasks")
        assert.strictEqual(answer.status, 502)
        assert.notMatch(answer.text, /airtable|stand-in|RATE_LIMIT|\/v0\//i)
        assert.lengthOf(standIn.requests.slice(sent), 3)
        // A 503 once, then the base answers: the request succeeds.
        standIn.failNext.push({ status: 503 })
        assert.strictEqual((yield* call("GET", "/api/tasks")).status, 200)
      })
    )

    // Last: it leaves the base paused for 30 seconds.
    it.effect("after a 429 the task inbox sends nothing to the base for 30 seconds: 502 at once", () =>
      Effect.gen(function* () {
        const { call } = yield* someone
        const standIn = seen.standIn!
        standIn.failNext.push({ status: 429, type: "RATE_LIMIT_REACHED" })
        const first = yield* call("GET", "/api/tasks")
        assert.strictEqual(first.status, 502)
        const sent = standIn.requests.length
        const second = yield* call("GET", "/api/tasks")
        assert.strictEqual(second.status, 502)
        assert.lengthOf(standIn.requests.slice(sent), 0, "no request reached the base during the pause")
      })
    )
  }))
