import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { randomBytes, randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "vitest"
import { sign } from "../../core/auth/Signature.ts"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"
import { mintToken } from "../support/Tokens.ts"
import { startReceiver } from "../support/WebhookReceiver.ts"

/**
 * Every mutation is one unit of work: a crash at any instant loses nothing acknowledged and repeats nothing.
 * A real server is killed (SIGKILL) at random moments under mixed load (creates and template raises with
 * keys, chooses that queue webhooks, signed events at the hub), restarted, and then every request is sent
 * again with its key. Every acknowledged answer comes back byte for byte, every change exists exactly once,
 * and every webhook and event that is due arrives, once per id.
 */

const running: Array<RunningServer> = []
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
  await Promise.all(cleanups.splice(0).map((f) => f()))
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const until = async <A>(
  what: string,
  probe: () => Promise<A | undefined>,
  timeoutMs = 30_000,
  detail: () => string = () => ""
): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  while (true) {
    const value = await probe().catch(() => undefined)
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} ${detail()}`)
    await sleep(50)
  }
}

/** A database of its own on the Postgres server, dropped after the test. */
const freshPostgres = async (serverUrl: string) => {
  const name = `hitl_crash_${randomBytes(5).toString("hex")}`
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

interface Sent {
  readonly kind: "create" | "raise" | "choose" | "event"
  readonly send: () => Promise<{ readonly status: number; readonly text: string }>
  /** The first answer the client got, if any: an acknowledged request. */
  first?: { readonly status: number; readonly text: string }
  /** What this request concerns: a title for creates and raises, a decision id for chooses, an event id. */
  readonly subject: string
}

const databases = [
  { name: "embedded database", url: undefined as string | undefined },
  ...(process.env["DATABASE_URL"] ? [{ name: "Postgres server", url: process.env["DATABASE_URL"] }] : [])
]

describe.each(databases)("a crash loses nothing acknowledged and repeats nothing ($name)", ({ url: serverUrl }) => {
  it("kills the server under mixed load, restarts it, replays every key: each change exactly once", async () => {
    const dataDir = tempDataDir()
    const env = {
      DATA_DIR: dataDir,
      ...(serverUrl === undefined ? {} : { DATABASE_URL: await freshPostgres(serverUrl) }),
      DECISIONS_WORKER_POLL_MS: "50",
      HUB_WORKER_POLL_MS: "50",
      EVENT_RELAY_POLL_MS: "50",
      EVENT_RELAY_LEASE_MS: "2000",
      // An event claimed by the killed server is processed again once this lease has passed.
      HUB_EVENT_LEASE_MS: "2000",
      WEBHOOK_RETRY_SCHEDULE: "0.2,0.2,0.5,1,1",
      WEBHOOK_TIMEOUT_MS: "1000",
      DECISIONS_CALLER_RATE_LIMIT: "1000000",
      DECISIONS_USER_RATE_LIMIT: "1000000",
      HUB_EVENTS_PER_MINUTE: "1000000",
      LOG_LEVEL: "Error"
    }
    let webhookSecret = ""
    const receiver = await startReceiver(
      () => webhookSecret,
      () => ({ status: 200 })
    )
    cleanups.push(receiver.close)

    let server = await startServer(env)
    running.push(server)
    const secrets = JSON.parse(readFileSync(join(dataDir, "dev-secrets.json"), "utf8")) as Record<string, string>
    const at = (service: "hub" | "decisions") => `http://127.0.0.1:${server.ports[service]}`
    const call = async (url: string, init: RequestInit) => {
      const response = await fetch(url, init)
      return { status: response.status, text: await response.text() }
    }
    const json = (body: unknown) => JSON.stringify(body)

    // The hub: an organization and a user whose feed receives the events.
    const hubAdmin = (method: string, path: string, body?: unknown) =>
      call(`${at("hub")}${path}`, {
        method,
        headers: { authorization: `Bearer ${secrets["HUB_ADMIN_KEY"]}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: json(body) })
      })
    const orgId = JSON.parse((await hubAdmin("POST", "/api/v1/admin/orgs", { name: "Acme" })).text).data.org.id
    assert.strictEqual(
      (await hubAdmin("POST", "/api/v1/admin/users", { email: "ada@acme.test", name: "Ada" })).status,
      201
    )
    // Eve's feed receives the events sent to the hub directly; Ada's the decisions' notifications.
    assert.strictEqual(
      (await hubAdmin("POST", "/api/v1/admin/users", { email: "eve@acme.test", name: "Eve" })).status,
      201
    )
    await until("the task inbox registered at the hub", async () => {
      const list = JSON.parse((await hubAdmin("GET", "/api/v1/admin/services")).text).data.services as Array<any>
      return list.some((s) => s.id === "tasks") ? true : undefined
    })

    // Decisions: a role Ada holds, a caller key, a template, a webhook endpoint.
    const adminToken = await mintToken({
      key: secrets["DECISIONS_EMBED_KEY"]!,
      issuer: "platform-hub",
      audience: "decisions",
      email: "admin@acme.test",
      companyId: "acme",
      orgRole: "ADMIN"
    })
    const workspace = (path: string, body: unknown, token = adminToken, key?: string) =>
      call(`${at("decisions")}${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-decisions-api-key": secrets["DECISIONS_API_KEY"]!,
          "x-workspace-token": token,
          ...(key === undefined ? {} : { "idempotency-key": key })
        },
        body: json(body)
      })
    assert.strictEqual((await workspace("/api/v1/workspace/roles", { slug: "finance", name: "Finance" })).status, 201)
    assert.strictEqual(
      (await workspace("/api/v1/workspace/roles/finance/assignments", { memberEmail: "ada@acme.test" })).status,
      201
    )
    const callerKey = JSON.parse((await workspace("/api/v1/workspace/keys", { name: "agent" })).text).data
      .plaintext as string
    const template = await workspace("/api/v1/workspace/templates", {
      slug: "refund",
      name: "Refund",
      roleSlug: "finance",
      titleTemplate: "Refund {{order}}?",
      options: [{ label: "Refund" }, { label: "Keep" }]
    })
    assert.strictEqual(template.status, 201, template.text)
    const caller = (path: string, body: unknown, key: string) =>
      call(`${at("decisions")}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${callerKey}`, "idempotency-key": key },
        body: json(body)
      })
    const webhook = await caller("/api/v1/webhooks", { url: receiver.url }, randomUUID())
    webhookSecret = JSON.parse(webhook.text).data.secret
    const ada = () =>
      mintToken({
        key: secrets["DECISIONS_EMBED_KEY"]!,
        issuer: "platform-hub",
        audience: "decisions",
        email: "ada@acme.test",
        companyId: "acme",
        orgRole: "MEMBER"
      })

    // The mixed load: each request is kept with its key so that it can be sent again, unchanged.
    const sent: Array<Sent> = []
    const acknowledgedDecisions: Array<string> = []
    let counter = 0
    const nextRequest = (): Sent => {
      const n = counter++
      const key = `key-${n}-${randomUUID()}`
      const pick = n % 4
      if (pick === 1) {
        const title = `Raise ${n}`
        return {
          kind: "raise",
          subject: `Refund ${title}?`,
          send: () => caller("/api/v1/templates/refund/raise", { params: { order: title } }, key)
        }
      }
      if (pick === 2 && acknowledgedDecisions.length > 0) {
        const id = acknowledgedDecisions.shift()!
        let token: string | undefined
        return {
          kind: "choose",
          subject: id,
          send: async () => {
            token ??= await ada()
            const decision = JSON.parse(
              (
                await call(`${at("decisions")}/api/v1/decisions/${id}`, {
                  headers: { authorization: `Bearer ${callerKey}` }
                })
              ).text
            ).data.decision
            return workspace(
              `/api/v1/workspace/decisions/${id}/choose`,
              { optionId: decision.options[0].id },
              token,
              key
            )
          }
        }
      }
      if (pick === 3) {
        const id = `01J${randomBytes(12).toString("hex").toUpperCase().slice(0, 23)}`
        const body = json({
          id,
          type: "tasks.notification.created",
          service: "tasks",
          occurredAt: new Date().toISOString(),
          subject: { email: "eve@acme.test", companyId: orgId },
          data: { title: `Event ${n}` },
          contractVersion: "v1"
        })
        return {
          kind: "event",
          subject: id,
          send: () => {
            const timestamp = Math.floor(Date.now() / 1000)
            return call(`${at("hub")}/api/webhooks/events`, {
              method: "POST",
              headers: {
                "content-type": "application/json",
                "x-platform-signature": sign({ secret: secrets["TASKS_SIGNING_KEY"]!, timestamp, payload: body }),
                "x-platform-timestamp": String(timestamp),
                "x-platform-event-id": id,
                "x-platform-delivery": `dlv_${randomUUID()}`
              },
              body
            })
          }
        }
      }
      const title = `Create ${n}`
      return {
        kind: "create",
        subject: title,
        send: () =>
          caller("/api/v1/decisions", { title, roleSlug: "finance", options: [{ label: "Yes" }, { label: "No" }] }, key)
      }
    }

    /** Sends requests from a few concurrent clients until the server stops answering. */
    const load = async () => {
      let alive = true
      const client = async () => {
        while (alive) {
          const request = nextRequest()
          sent.push(request)
          try {
            const answer = await request.send()
            request.first = answer
            if (request.kind === "create" && answer.status === 201) {
              acknowledgedDecisions.push(JSON.parse(answer.text).data.decision.id)
            }
          } catch {
            alive = false
          }
        }
      }
      return Promise.all(Array.from({ length: 6 }, client))
    }

    // Two crashes at random moments, each followed by a restart on the same data. A crash comes once the
    // round's load is under way (a dozen more requests acknowledged, however busy the machine), then after a
    // random pause.
    const acknowledgedSoFar = () => sent.filter((r) => r.first !== undefined).length
    for (let round = 0; round < 2; round++) {
      const before = acknowledgedSoFar()
      const clients = load()
      const underWay = Date.now() + 60_000
      while (acknowledgedSoFar() < before + 12 && Date.now() < underWay) await sleep(20)
      await sleep(Math.floor(Math.random() * 900))
      server.child.kill("SIGKILL")
      await server.exited
      await clients
      server = await startServer(env)
      running.push(server)
    }

    const acknowledged = sent.filter((r) => r.first !== undefined)
    assert.isAbove(acknowledged.length, 20, "the load acknowledged enough requests before the crashes")
    assert.isAbove(sent.length - acknowledged.length, 0, "some requests were cut off by the crashes")
    for (const request of acknowledged) {
      assert.include([200, 201, 202], request.first!.status, `${request.kind}: ${request.first!.text}`)
    }

    // Every key again: an acknowledged request gets its first answer back, byte for byte; one that was
    // cut off runs now (or replays what had committed) and then answers the same every time.
    for (const request of sent) {
      const again = await request.send()
      if (request.first !== undefined) {
        if (request.kind === "event") assert.include([200, 202], again.status)
        else assert.deepStrictEqual(again, request.first, `${request.kind} ${request.subject}`)
      } else {
        assert.include([200, 201, 202], again.status, `${request.kind}: ${again.text}`)
        if (request.kind !== "event") assert.deepStrictEqual(await request.send(), again)
      }
    }

    // Each create and raise made exactly one decision.
    const titles: Array<string> = []
    let cursor: string | undefined
    do {
      const page = JSON.parse(
        (
          await call(`${at("decisions")}/api/v1/decisions?limit=100${cursor ? `&cursor=${cursor}` : ""}`, {
            headers: { authorization: `Bearer ${callerKey}` }
          })
        ).text
      ).data
      titles.push(...page.decisions.map((d: { title: string }) => d.title))
      cursor = page.nextCursor
    } while (cursor !== undefined)
    const made = sent.filter((r) => r.kind === "create" || r.kind === "raise").map((r) => r.subject)
    assert.sameMembers(titles, made)

    // Each choose resolved its decision once: one resolved webhook per chosen decision, by delivery id.
    const chosen = sent.filter((r) => r.kind === "choose").map((r) => r.subject)
    await until(
      "a resolved webhook for every chosen decision",
      async () => {
        const resolved = [...receiver.accepted.values()].filter((e: any) => e.type === "decision.resolved")
        return resolved.length >= chosen.length ? resolved : undefined
      },
      30_000
    )
    await sleep(500)
    const resolvedIds = [...receiver.accepted.values()]
      .filter((e: any) => e.type === "decision.resolved")
      .map((e: any) => e.data.decision.id as string)
    assert.sameMembers(resolvedIds, chosen)

    // Each event landed once in Eve's feed.
    const events = sent.filter((r) => r.kind === "event").map((r) => r.subject)
    let lastFeed = ""
    const feed = await until(
      "every event in the feed",
      async () => {
        const answer = await hubAdmin("GET", "/api/v1/admin/users/eve%40acme.test/notifications?limit=200")
        lastFeed = `${events.length} events, ${JSON.parse(answer.text).data.notifications.length} in the feed; missing acked: ${JSON.stringify(sent.filter((r) => r.kind === "event" && !answer.text.includes(r.subject)).map((r) => [r.first?.status, r.first === undefined]))}`
        const notifications = (
          JSON.parse(answer.text).data.notifications as Array<{ eventId: string; service: string }>
        ).filter((n) => n.service === "tasks")
        return notifications.length >= events.length ? notifications : undefined
      },
      30_000,
      () => lastFeed
    )
    await sleep(300)
    const feedNow = JSON.parse(
      (await hubAdmin("GET", "/api/v1/admin/users/eve%40acme.test/notifications?limit=200")).text
    ).data.notifications as Array<{ eventId: string; service: string; title: string }>
    assert.isAtLeast(feed.length, events.length)
    assert.sameMembers(
      feedNow.filter((n) => n.service === "tasks").map((n) => n.eventId),
      events
    )

    const feedMax = 200
    // Ada holds the role of every decision made: each told her once, whenever the crashes fell between the
    // decision, its relay and the hub (the hub files an event once per producer and id).
    const told = await until(
      "a notification for every decision made",
      async () => {
        const answer = await hubAdmin("GET", "/api/v1/admin/users/ada%40acme.test/notifications?limit=200")
        const titles = (JSON.parse(answer.text).data.notifications as Array<{ service: string; title: string }>)
          .filter((n) => n.service === "decisions")
          .map((n) => n.title)
        return titles.length >= Math.min(made.length, feedMax) ? titles : undefined
      },
      30_000
    )
    // The feed answers its newest 200: each of them once, and all of them when that is every decision.
    assert.strictEqual(new Set(told).size, told.length)
    assert.includeMembers(made, told)
    assert.strictEqual(told.length, Math.min(made.length, feedMax))
  }, 180_000)
})
