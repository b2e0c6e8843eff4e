import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { IdempotencyStoreMemory } from "../../adapters/memory/IdempotencyStoreMemory.ts"
import { Decisions } from "../../core/decisions/Decisions.ts"
import { pglite } from "../support/Databases.ts"
import { DecisionsMemory } from "../support/DecisionsMemory.ts"
import { decisionsSqlOn } from "../support/DecisionsSql.ts"
import { decisionsClient, financeOrganization, serveDecisions } from "../support/DecisionsServed.ts"
import type { Answer } from "../support/Http.ts"

const backends = [
  { name: "memory", data: Layer.merge(DecisionsMemory, IdempotencyStoreMemory) },
  { name: "sql", data: decisionsSqlOn(pglite) }
]

/**
 * `data` with its decisions use cases counting the long-polls that have begun (`began.count`), so a test knows
 * when every long-poll it sent has reached the service; `began.decisions` are the use cases the server runs.
 */
const countingWaits = <E, R>(data: Layer.Layer<Decisions, E, R>) => {
  const began: { count: number; decisions?: Decisions["Service"] } = { count: 0 }
  const counting = Layer.effect(
    Decisions,
    Effect.map(Decisions, (decisions) => {
      began.decisions = decisions
      return Decisions.of({
        ...decisions,
        waitForChange: (...args) =>
          Effect.suspend(() => {
            began.count++
            return decisions.waitForChange(...args)
          })
      })
    })
  )
  return { began, data: Layer.merge(data, Layer.provide(counting, data)) }
}

/** What a client can tell apart in two answers: status, content type and the body's bytes. */
const seen = (answer: Answer) => ({
  status: answer.status,
  contentType: answer.headers.get("content-type"),
  body: answer.text
})

const waiters = 30

describe.each(backends)("decision long-polls over HTTP ($name adapters)", (backend) => {
  it.live("many long-polls on one decision all answer its change, exactly as a GET of it answers", () =>
    Effect.gen(function* () {
      const { began, data } = countingWaits(backend.data)
      const { baseUrl } = yield* serveDecisions(data)
      const org = yield* financeOrganization(baseUrl, "acme")
      const { caller } = decisionsClient(baseUrl)
      const created = yield* caller(
        "POST",
        "/api/v1/decisions",
        org.key,
        { title: "Refund order 1042?", roleSlug: "finance", options: [{ label: "Refund" }, { label: "Replace" }] },
        { "idempotency-key": crypto.randomUUID() }
      )
      assert.strictEqual(created.status, 201, created.text)
      const id = created.json.data.decision.id as string

      // A short wait: a long-poll that reached the service only after the change still answers it, at its end.
      const polls = yield* Effect.forEach(Array.from({ length: waiters }), () =>
        Effect.forkChild(caller("GET", `/api/v1/decisions/${id}?wait=5`, org.key), { startImmediately: true })
      )
      while (began.count < waiters) yield* Effect.sleep("5 millis")
      // Served by the read that answers the first reads of the long-polls before it: once answered, they hold.
      yield* began.decisions!.waitForChange("acme", id, 0)

      const cancelled = yield* caller("POST", `/api/v1/decisions/${id}/cancel`, org.key)
      assert.strictEqual(cancelled.status, 200, cancelled.text)
      const answers = yield* Effect.forEach(polls, Fiber.join)
      const get = yield* caller("GET", `/api/v1/decisions/${id}`, org.key)

      assert.strictEqual(get.json.data.decision.status, "cancelled")
      assert.isArray(get.json.data.decision.actions)
      for (const answer of answers) assert.deepStrictEqual(seen(answer), seen(get))
    }).pipe(Effect.scoped)
  )

  it.live("another organization's long-poll on a decision answers 404 as its GET does", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serveDecisions(backend.data)
      const owner = yield* financeOrganization(baseUrl, "acme")
      const stranger = yield* financeOrganization(baseUrl, "globex")
      const { caller } = decisionsClient(baseUrl)
      const created = yield* caller(
        "POST",
        "/api/v1/decisions",
        owner.key,
        { title: "Refund order 1042?", roleSlug: "finance", options: [{ label: "Refund" }, { label: "Replace" }] },
        { "idempotency-key": crypto.randomUUID() }
      )
      assert.strictEqual(created.status, 201, created.text)
      const id = created.json.data.decision.id as string
      const ownerPoll = yield* Effect.forkChild(caller("GET", `/api/v1/decisions/${id}?wait=5`, owner.key), {
        startImmediately: true
      })
      const theirs = yield* caller("GET", `/api/v1/decisions/${id}?wait=5`, stranger.key)
      const theirGet = yield* caller("GET", `/api/v1/decisions/${id}`, stranger.key)
      assert.strictEqual(theirs.status, 404)
      assert.deepStrictEqual(
        { ...seen(theirs), body: theirs.json.error.code },
        { ...seen(theirGet), body: theirGet.json.error.code }
      )
      yield* caller("POST", `/api/v1/decisions/${id}/cancel`, owner.key)
      const owners = yield* Fiber.join(ownerPoll)
      assert.strictEqual(owners.json.data.decision.status, "cancelled")
    }).pipe(Effect.scoped)
  )
})
