import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { Transactions } from "../../core/kernel/Transactions.ts"
import { RecordStore } from "../../core/tasks/RecordStore.ts"
import { TaskAccess } from "../../core/tasks/TaskAccess.ts"
import * as Query from "../../core/tasks/Query.ts"
import { sqlBackends } from "../support/Databases.ts"
import { request } from "../support/Http.ts"
import { tasksMemoryData, tasksServer, tasksSqlData, TasksServer, type TasksData } from "../support/TasksStack.ts"

/** A new person of the task inbox, and a personal API key of theirs. */
const personalKey = (name: string) =>
  Effect.gen(function* () {
    const access = yield* TaskAccess
    const records = yield* RecordStore
    const email = `${name.toLowerCase()}.${randomUUID().slice(0, 8)}@example.com`
    const person = yield* records.create("collaborators", { email, name })
    return (yield* access.createApiKey({ id: person.id, email, name }, "tests")).key
  })

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
          const records = yield* RecordStore
          const key = yield* personalKey("Ada")
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

/** The data's units of work, counting the units that ask to share their transaction. */
const countingShared = (data: TasksData) => {
  const counted = { shared: 0 }
  const spy = Layer.effect(
    Transactions,
    Effect.map(Transactions, (transactions) =>
      Transactions.of({
        ...transactions,
        shared: (key, effect) => {
          counted.shared++
          return transactions.shared(key, effect)
        }
      })
    )
  )
  return { counted, data: spy.pipe(Layer.provideMerge(data)) as TasksData }
}

for (const backend of backends) {
  const { counted, data } = countingShared(backend.data)
  describe(`task creates share their units of work (${backend.name})`, () =>
    layer(tasksServer(data), { excludeTestServices: true, timeout: 60_000 })((it) => {
      it.effect(
        "task and proposal creates of one moment, with and without keys, a bad one among them: each made once",
        () =>
          Effect.gen(function* () {
            const { baseUrl } = yield* TasksServer
            const records = yield* RecordStore
            const key = yield* personalKey("Grace")
            const run = randomUUID()
            const send = (method: string, path: string, body: unknown, idempotencyKey?: string) =>
              request(`${baseUrl}${path}`, {
                method,
                headers: {
                  "content-type": "application/json",
                  "x-api-key": key,
                  ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey })
                },
                body: JSON.stringify(body)
              })
            const project = yield* records.create("projects", { name: `${run} project` })
            const before = counted.shared
            const bodies = Array.from({ length: 8 }, (_, i) => ({ title: `${run} ${i}` }))
            const creates: ReadonlyArray<{
              readonly path: string
              readonly body: unknown
              readonly key: string | undefined
            }> = [
              ...bodies.map((body, i) => ({
                path: "/api/tasks",
                body,
                key: i % 2 === 0 ? undefined : `k-${run}-${i}`
              })),
              // No title: refused, inside its unit, beside the others.
              { path: "/api/tasks", body: {}, key: undefined },
              ...[0, 1].map((i) => ({
                path: "/api/proposals",
                body: {
                  name: `${run} proposal ${i}`,
                  type: "New task",
                  projectId: project.id,
                  proposedChangesObj: { action: "create_task", title: `${run} p${i}` }
                },
                key: i === 0 ? undefined : `p-${run}`
              }))
            ]
            const answers = yield* Effect.forEach(
              creates,
              (create) => send("POST", create.path, create.body, create.key),
              { concurrency: "unbounded" }
            )
            assert.strictEqual(counted.shared - before, 11)
            for (const answer of answers.slice(0, 8)) assert.strictEqual(answer.status, 201, answer.text)
            assert.strictEqual(answers[8]!.status, 400, answers[8]!.text)
            for (const answer of answers.slice(9)) assert.strictEqual(answer.status, 201, answer.text)
            for (const body of bodies) {
              const made = yield* records.select("tasks", Query.eq("title", body.title))
              assert.strictEqual(made.length, 1, body.title)
            }
            for (const i of [0, 1]) {
              const made = yield* records.select("proposals", Query.eq("name", `${run} proposal ${i}`))
              assert.strictEqual(made.length, 1)
            }
            // A change of an existing task is a unit of its own.
            const id = (answers[0]!.json as { readonly task: { readonly id: string } }).task.id
            const changed = yield* send("PATCH", `/api/tasks/${id}`, { title: `${run} changed` })
            assert.strictEqual(changed.status, 200, changed.text)
            assert.strictEqual(counted.shared - before, 11)
          })
      )
    }))
}

describe("task creates over a record store outside the database", () => {
  // The same memory store, saying its writes are not part of the unit (an upstream reached over HTTP would not be).
  const outside = Layer.effect(
    RecordStore,
    Effect.map(RecordStore, (records) => RecordStore.of({ ...records, inUnits: false }))
  ).pipe(Layer.provideMerge(tasksMemoryData)) as TasksData
  const { counted, data } = countingShared(outside)
  layer(tasksServer(data), { excludeTestServices: true, timeout: 60_000 })((it) => {
    it.effect("are units of their own, never shared: a group run again would repeat their writes", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TasksServer
        const key = yield* personalKey("Lin")
        const before = counted.shared
        const answers = yield* Effect.forEach(
          [undefined, `k-${randomUUID()}`],
          (idempotencyKey) =>
            request(`${baseUrl}/api/tasks`, {
              method: "POST",
              headers: {
                "content-type": "application/json",
                "x-api-key": key,
                ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey })
              },
              body: JSON.stringify({ title: `Alone ${randomUUID()}` })
            }),
          { concurrency: "unbounded" }
        )
        for (const answer of answers) assert.strictEqual(answer.status, 201, answer.text)
        assert.strictEqual(counted.shared - before, 0)
      })
    )
  })
})
