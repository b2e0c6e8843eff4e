import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import * as Q from "../../core/tasks/Query.ts"
import { RecordStore } from "../../core/tasks/RecordStore.ts"
import { Proposals } from "../../core/tasks/Proposals.ts"
import { TaskAccess } from "../../core/tasks/TaskAccess.ts"
import { pglite, sqlBackends } from "../support/Databases.ts"
import type { AirtableStandIn } from "../fakes/AirtableStandIn.ts"
import { request, type Answer } from "../support/Http.ts"
import { tasksAirtableData, tasksMemoryData, tasksServer, tasksSqlData, TasksServer } from "../support/TasksStack.ts"

/** The stand-in of the Airtable backend, to ask what it saw. */
const seen: { standIn?: AirtableStandIn; baseId?: string } = {}

const backends = [
  { name: "memory", data: tasksMemoryData },
  ...sqlBackends.map((backend) => ({ name: backend.name, data: tasksSqlData(backend) })),
  // Airtable's limits on both sides: the stand-in refuses a sixth request in a second.
  {
    name: "airtable stand-in",
    data: tasksAirtableData(pglite, {
      limits: true,
      onStart: (standIn, baseId) => Object.assign(seen, { standIn, baseId })
    })
  }
]

/** An Airtable base never saw more than 5 requests in a second, nor a 429. */
const withinAirtableLimits = Effect.sync(() => {
  if (seen.standIn === undefined) return
  assert.isAtMost(seen.standIn.busiestSecond(seen.baseId!), 5)
  assert.deepStrictEqual(
    seen.standIn.requests.filter((r) => r.status === 429),
    []
  )
})

/** A person with an API key of their own, and a create_task proposal they own. */
const ownerWithProposal = Effect.gen(function* () {
  const { baseUrl } = yield* TasksServer
  const access = yield* TaskAccess
  const proposals = yield* Proposals
  const records = yield* RecordStore
  const email = `owner.${randomUUID().slice(0, 8)}@example.com`
  const person = yield* records.create("collaborators", { email, name: "Owner" })
  const { key } = yield* access.createApiKey({ id: person.id, email, name: "Owner" }, "tests")
  const proposal = yield* proposals.create(
    { id: person.id, email, name: "Owner" },
    {
      projectId: (yield* records.create("projects", { name: "Race" })).id,
      type: "New task",
      proposedChangesObj: { action: "create_task", title: "Exactly once" }
    }
  )
  /** Every request is sent before any answer is read. */
  const together = (paths: ReadonlyArray<readonly [string, unknown]>) =>
    Effect.promise(() =>
      Promise.all(
        paths.map(([path, body]) =>
          Effect.runPromise(
            request(`${baseUrl}/api/proposals/${proposal.id}/${path}`, {
              method: "POST",
              headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
              ...(body === undefined ? {} : { body: JSON.stringify(body) })
            })
          )
        )
      )
    )
  const createdTasks = records.select("tasks", Q.eq("originDetail", `Proposal ${proposal.id}`))
  const storedStatus = Effect.map(records.get("proposals", proposal.id), (r) => r?.fields["aiStatus"])
  return { together, createdTasks, storedStatus, key, baseUrl }
})

const winnerAndLosers = (answers: ReadonlyArray<Answer>) => ({
  winners: answers.filter((a) => a.status === 200),
  losers: answers.filter((a) => a.status !== 200)
})

for (const backend of backends) {
  describe(`a proposal resolves once over HTTP (${backend.name})`, () =>
    layer(tasksServer(backend.data), { excludeTestServices: true, timeout: 120_000 })((it) => {
      it.effect("8 accepts sent at once: one 200 with its task, seven 409 'no longer open: Accepted', one task", () =>
        Effect.gen(function* () {
          const { together, createdTasks, storedStatus, key, baseUrl } = yield* ownerWithProposal
          const answers = yield* together(Array.from({ length: 8 }, () => ["accept", undefined] as const))
          const { winners, losers } = winnerAndLosers(answers)
          assert.lengthOf(winners, 1, answers.map((a) => `${a.status} ${a.text}`).join("\n"))
          for (const loser of losers) {
            assert.strictEqual(loser.status, 409)
            assert.deepStrictEqual(loser.json, { error: "Proposal is no longer open: Accepted" })
          }
          const created = yield* createdTasks
          assert.lengthOf(created, 1)
          yield* withinAirtableLimits
          assert.strictEqual(winners[0]!.json.task.id, created[0]!.id)
          assert.strictEqual(winners[0]!.json.proposal.aiStatus, "Accepted")
          assert.strictEqual(yield* storedStatus, "Accepted")
          // The owner's inbox holds the one task.
          const mine = yield* request(`${baseUrl}/api/tasks`, { headers: { "x-api-key": key } })
          assert.lengthOf(
            mine.json.tasks.filter((t: { readonly title: string }) => t.title === "Exactly once"),
            1
          )
        })
      )

      it.effect("accepts and rejects sent at once: one wins, the others say what it became, the store agrees", () =>
        Effect.gen(function* () {
          const { together, createdTasks, storedStatus } = yield* ownerWithProposal
          const answers = yield* together(
            Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? ["accept", undefined] : ["reject", { reason: "No" }]))
          )
          const { winners, losers } = winnerAndLosers(answers)
          assert.lengthOf(winners, 1, answers.map((a) => `${a.status} ${a.text}`).join("\n"))
          const became = winners[0]!.json.proposal.aiStatus
          assert.oneOf(became, ["Accepted", "Rejected"])
          for (const loser of losers) {
            assert.strictEqual(loser.status, 409)
            assert.deepStrictEqual(loser.json, { error: `Proposal is no longer open: ${became}` })
          }
          assert.strictEqual(yield* storedStatus, became)
          assert.lengthOf(yield* createdTasks, became === "Accepted" ? 1 : 0)
          yield* withinAirtableLimits
        })
      )
    }))
}
