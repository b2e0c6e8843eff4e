import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { randomBytes, randomUUID } from "node:crypto"
import { afterEach, assert, describe, it } from "vitest"
import { about, acme, platform, until } from "../support/DecisionsPlatform.ts"
import { freePort, startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"

/**
 * The decisions service tells deciders through the hub (docs/notifications.md, "What services emit"): the
 * bundled server, its decisions service relaying `decisions.notification.created` signed with its own key
 * to its hub, read back from each person's feed on the hub's operator plane.
 */

const running: Array<RunningServer> = []
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
  await Promise.all(cleanups.splice(0).map((f) => f()))
})

/** A database of its own on the Postgres server, dropped after the test. */
const freshPostgres = async (serverUrl: string) => {
  const name = `hitl_notify_${randomBytes(5).toString("hex")}`
  const admin = (statement: (sql: PgClient.PgClient) => Effect.Effect<unknown, unknown>) =>
    Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(PgClient.make({ url: Redacted.make(serverUrl), maxConnections: 1 }), statement)
      ).pipe(Effect.provide(Reactivity.layer)) as Effect.Effect<unknown>
    )
  await admin((sql) => sql`CREATE DATABASE ${sql(name)}`)
  cleanups.push(() => admin((sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`).then(() => undefined))
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}

const databases = [
  { name: "embedded database", url: undefined as string | undefined },
  ...(process.env["DATABASE_URL"] ? [{ name: "Postgres server", url: process.env["DATABASE_URL"] }] : [])
]

const options = [{ label: "Refund" }, { label: "Keep" }]

/** A busy machine can take more than the default minute to start the server. */
const slowStart = { readyWithinMillis: 240_000 }

describe.each(databases)("decisions notify through the hub ($name)", ({ url: serverUrl }) => {
  const environment = async (relayPollMs: number) => ({
    DATA_DIR: tempDataDir(),
    ...(serverUrl === undefined ? {} : { DATABASE_URL: await freshPostgres(serverUrl) }),
    EVENT_RELAY_POLL_MS: String(relayPollMs),
    HUB_WORKER_POLL_MS: "100",
    LOG_LEVEL: "Error"
  })

  it("a decision reaches each holder's feed with its link; an answer reaches the asker; unrouted reaches admins", async () => {
    const env = await environment(100)
    const server = await startServer(env)
    running.push(server)
    const p = await platform(server, env.DATA_DIR)
    const { orgId, key } = await acme(p)

    const created = await p.caller(key, "/api/v1/decisions", {
      title: "Refund order 42?",
      roleSlug: "finance",
      options
    })
    assert.strictEqual(created.status, 201)
    const id = created.json.data.decision.id as string
    // The bundled server gives the caller the page's address at the hub, to hand a person.
    assert.strictEqual(
      created.json.data.decision.url,
      `http://127.0.0.1:${server.ports.hub}/apps/decisions/decision-${id}`
    )

    for (const email of ["ann@acme.test", "bob@acme.test"]) {
      const [item] = await until(`${email} told of the decision`, async () => {
        const found = about(await p.feed(email), id, "decision_assigned")
        return found.length > 0 ? found : undefined
      })
      assert.deepInclude(item, {
        service: "decisions",
        title: "Refund order 42?",
        body: "Refund agent asks for your decision.",
        url: `/apps/decisions/decision-${id}`
      })
    }

    // Ann asks; the caller answers; Ann hears.
    const ann = await p.token("ann@acme.test", orgId, "MEMBER")
    const asked = await p.workspace(ann, `/api/v1/workspace/decisions/${id}/info-requests`, {
      question: "Which order?"
    })
    assert.strictEqual(asked.status, 200)
    const infoRequestId = asked.json.data.decision.infoRequests[0].id as string
    const answered = await p.caller(key, `/api/v1/decisions/${id}/info-response`, {
      infoRequestId,
      answer: "Order 42, the blue one"
    })
    assert.strictEqual(answered.status, 200)
    const [answer] = await until("Ann told of the answer", async () => {
      const found = about(await p.feed("ann@acme.test"), id, "info_answered")
      return found.length > 0 ? found : undefined
    })
    assert.strictEqual(answer!.body, "Your question was answered: Order 42, the blue one")

    // Nobody holds `legal`: the admin hears that nobody can act on it.
    const unrouted = await p.caller(key, "/api/v1/decisions", { title: "Sign the NDA?", roleSlug: "legal", options })
    assert.strictEqual(unrouted.status, 201)
    const unroutedId = unrouted.json.data.decision.id as string
    await until("Carol told of the unrouted decision", async () => {
      const found = about(await p.feed("carol@acme.test"), unroutedId, "decision_unrouted")
      return found.length > 0 ? found : undefined
    })

    // Each once, and only to whom it concerns.
    await until("the hub has processed everything", async () => {
      const carol = await p.feed("carol@acme.test")
      return carol.length >= 1 ? carol : undefined
    })
    const [annFeed, bobFeed, carolFeed] = await Promise.all(
      ["ann@acme.test", "bob@acme.test", "carol@acme.test"].map(p.feed)
    )
    assert.lengthOf(about(annFeed!, id, "decision_assigned"), 1)
    assert.lengthOf(about(bobFeed!, id, "decision_assigned"), 1)
    assert.lengthOf(about(annFeed!, id, "info_answered"), 1)
    assert.lengthOf(about(bobFeed!, id, "info_answered"), 0)
    assert.lengthOf(about(carolFeed!, unroutedId, "decision_unrouted"), 1)
    assert.isFalse(carolFeed!.some((n) => n.url === `/apps/decisions/decision-${id}`))
    assert.isFalse(annFeed!.some((n) => n.url === `/apps/decisions/decision-${unroutedId}`))

    // Bob answers: the notification follows its decision for Ann and Bob alike, done, saying how it ended.
    const bob = await p.token("bob@acme.test", orgId, "MEMBER")
    const optionId = created.json.data.decision.options[0].id as string
    const chosen = await p.workspace(bob, `/api/v1/workspace/decisions/${id}/choose`, { optionId })
    assert.strictEqual(chosen.status, 200, JSON.stringify(chosen.json))
    for (const email of ["ann@acme.test", "bob@acme.test"]) {
      const [settled] = await until(`${email}'s notification settled`, async () => {
        const found = about(await p.feed(email), id, "decision_assigned").filter((n) => n.readAt !== null)
        return found.length > 0 ? found : undefined
      })
      assert.strictEqual(settled!.body, "Answered by bob@acme.test: Refund.")
    }
    // Ann's answered question is news of its own, left as it was.
    assert.isNull(about(await p.feed("ann@acme.test"), id, "info_answered")[0]!.readAt)
    // The caller cancels the unrouted one: Carol is no longer asked for it either.
    const cancelled = await p.caller(key, `/api/v1/decisions/${unroutedId}/cancel`, {})
    assert.strictEqual(cancelled.status, 200, JSON.stringify(cancelled.json))
    const [gone] = await until("Carol's notification settled", async () => {
      const found = about(await p.feed("carol@acme.test"), unroutedId, "decision_unrouted")
      return found[0]?.readAt !== null ? found : undefined
    })
    assert.strictEqual(gone!.body, "The caller cancelled this decision.")
  }, 120_000)

  it("a crash after the decision and before its relay delivers exactly one notification after the restart", async () => {
    // The first server's relays look for the hub where nothing listens, so they never begin: the decision's
    // event stays in the outbox. Each person's notification is an event of its own: a kill may land while one
    // is claimed (by a relay or the hub's processor) and not yet filed, and the next server takes it once that
    // claim's lease has passed, so the leases are short here.
    const env = { ...(await environment(3_600_000)), EVENT_RELAY_LEASE_MS: "2000", HUB_EVENT_LEASE_MS: "2000" }
    let server = await startServer({ ...env, HUB_URL: `http://127.0.0.1:${await freePort()}` }, slowStart)
    running.push(server)
    const p1 = await platform(server, env.DATA_DIR)
    const { key } = await acme(p1)
    const idempotencyKey = randomUUID()
    const body = { title: "Refund order 77?", roleSlug: "finance", options }
    const created = await p1.caller(key, "/api/v1/decisions", body, idempotencyKey)
    assert.strictEqual(created.status, 201)
    const id = created.json.data.decision.id as string
    assert.lengthOf(about(await p1.feed("ann@acme.test"), id, "decision_assigned"), 0)
    server.child.kill("SIGKILL")
    await server.exited

    // Restarted on the same data with a relay that runs: the event goes out, once.
    server = await startServer({ ...env, EVENT_RELAY_POLL_MS: "100" }, slowStart)
    running.push(server)
    const p2 = await platform(server, env.DATA_DIR)
    await until("Ann told of the decision after the restart", async () => {
      const found = about(await p2.feed("ann@acme.test"), id, "decision_assigned")
      return found.length > 0 ? found : undefined
    })
    // The same request again replays its answer and tells nobody again; another crash and start changes nothing.
    const again = await p2.caller(key, "/api/v1/decisions", body, idempotencyKey)
    assert.deepStrictEqual(again, created)
    server.child.kill("SIGKILL")
    await server.exited
    server = await startServer({ ...env, EVENT_RELAY_POLL_MS: "100" }, slowStart)
    running.push(server)
    const p3 = await platform(server, env.DATA_DIR)
    const bob = await until("Bob told of the decision", async () => {
      const found = about(await p3.feed("bob@acme.test"), id, "decision_assigned")
      return found.length > 0 ? found : undefined
    })
    assert.lengthOf(bob, 1)
    assert.lengthOf(about(await p3.feed("ann@acme.test"), id, "decision_assigned"), 1)
  }, 600_000)

  it("relays an event right after its commit, long before the poll interval", async () => {
    // Every relay and worker polls once an hour: only the wake-ups after commit can tell anyone in time.
    const env = { ...(await environment(3_600_000)), HUB_WORKER_POLL_MS: "3600000" }
    const server = await startServer(env, slowStart)
    running.push(server)
    const p = await platform(server, env.DATA_DIR)
    const { key } = await acme(p)
    const told = async (title: string) => {
      const created = await p.caller(key, "/api/v1/decisions", { title, roleSlug: "finance", options })
      assert.strictEqual(created.status, 201)
      const id = created.json.data.decision.id as string
      return until(
        `Ann told of "${title}"`,
        async () => {
          const found = about(await p.feed("ann@acme.test"), id, "decision_assigned")
          return found.length > 0 ? found : undefined
        },
        60_000
      )
    }
    // The first may go out with the relay's first pass at start; the second only by a wake-up.
    await told("Refund order 1?")
    await told("Refund order 2?")
  }, 600_000)
})
