import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { RecordStore } from "../../core/tasks/RecordStore.ts"
import { TaskAccess } from "../../core/tasks/TaskAccess.ts"
import * as Query from "../../core/tasks/Query.ts"
import { sqlBackends } from "../support/Databases.ts"
import { request } from "../support/Http.ts"
import { tasksMemoryData, tasksServer, tasksSqlData, TasksServer } from "../support/TasksStack.ts"

const backends = [
  { name: "memory", data: tasksMemoryData },
  ...sqlBackends.map((backend) => ({ name: backend.name, data: tasksSqlData(backend) }))
]

for (const backend of backends) {
  describe(`task inbox mutations honour Idempotency-Key (${backend.name})`, () =>
    layer(tasksServer(backend.data), { excludeTestServices: true, timeout: 60_000 })((it) => {
      it.effect("concurrent repeats of a create make one task and all answer the first response", () =>
        Effect.gen(function* () {
          const { baseUrl } = yield* TasksServer
          const access = yield* TaskAccess
          const records = yield* RecordStore
          const email = `ada.${randomUUID().slice(0, 8)}@example.com`
          const person = yield* records.create("collaborators", { email, name: "Ada" })
          const { key } = yield* access.createApiKey({ id: person.id, email, name: "Ada" }, "tests")
          const title = `Once ${randomUUID()}`
          const create = (idempotencyKey: string, body: unknown) =>
            request(`${baseUrl}/api/tasks`, {
              method: "POST",
              headers: { "content-type": "application/json", "x-api-key": key, "idempotency-key": idempotencyKey },
              body: JSON.stringify(body)
            })
          const answers = yield* Effect.forEach(Array.from({ length: 6 }), () => create("task-1", { title }), {
            concurrency: "unbounded"
          })
          for (const answer of answers) {
            assert.strictEqual(answer.status, 201, answer.text)
            assert.strictEqual(answer.text, answers[0]!.text)
          }
          const made = yield* records.select("tasks", Query.eq("title", title))
          assert.strictEqual(made.length, 1)

          const reused = yield* create("task-1", { title: `${title} again` })
          assert.strictEqual(reused.status, 409)
          assert.isString(reused.json.error)
          const bad = yield* create("with space", { title })
          assert.strictEqual(bad.status, 400)
          assert.property(bad.json, "error")
        })
      )
    }))
}
