import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Layer, Logger, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { monotonicFactory } from "ulid"
import { HubEventPublisherHttp } from "../../adapters/http/HubEventPublisherHttp.ts"
import { ProducerOutboxMemory } from "../../adapters/memory/ProducerOutboxMemory.ts"
import { TasksEventRelay } from "../../apps/server/tasks/TasksRuntime.ts"
import { verify } from "../../core/auth/Signature.ts"
import { IdGeneratorUlid, isUlid } from "../../core/kernel/Ids.ts"
import { ProducerOutbox, type ProducerEvent } from "../../core/events/ProducerOutbox.ts"
import { ProducerRelay } from "../../core/events/ProducerRelay.ts"

const signingKey = "tasks-signing-key-for-the-relay-tests"
const nextId = monotonicFactory()

const delegation = (): ProducerEvent => ({
  id: nextId(),
  type: "tasks.notification.created",
  service: "tasks",
  occurredAt: "2030-01-01T00:00:00.000Z",
  subject: { email: "bob@example.com" },
  data: { kind: "task_delegated", taskId: "rec1", title: `Zoë's "report" ✓`, link: "https://tasks.example/t/rec1" },
  contractVersion: "v1"
})

interface Hit {
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** AUTH-2 checked with core/auth/Signature.ts `verify`, the four headers present, the ids equal. */
  readonly verified: boolean
  readonly answered: number
}

/**
 * A stand-in for the hub's `POST /api/webhooks/events`: it checks each delivery as the platform contract says (the
 * four headers, AUTH-2 over the raw body within 300 s of `nowSeconds()`, header id = body id), answers 401
 * to one that fails, else the next of `answers` (the last one repeats), and signals `received` each time.
 */
const startHub = (answers: ReadonlyArray<number>, nowSeconds: () => number) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const hits: Array<Hit> = []
      const received = Effect.runSync(Deferred.make<void>())
      const server = createServer((req, res) => {
        // The public catalog, as the hub answers it once the task inbox is registered: the relay waits for it.
        if (req.method === "GET" && req.url?.startsWith("/api/v1/event-catalog") === true) {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(
            JSON.stringify({
              data: {
                contractVersion: "v1",
                producers: ["tasks"],
                types: [{ type: "tasks.notification.created", producer: "tasks", isNotification: true }]
              }
            })
          )
          return
        }
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        req.on("end", () => {
          const raw = Buffer.concat(chunks)
          const h = req.headers
          const body = raw.toString("utf8")
          const verified =
            req.method === "POST" &&
            req.url === "/api/webhooks/events" &&
            typeof h["x-platform-delivery"] === "string" &&
            h["x-platform-delivery"] !== "" &&
            h["x-platform-event-id"] === (JSON.parse(body) as { id: string }).id &&
            verify({
              secret: signingKey,
              timestamp: h["x-platform-timestamp"] as string | undefined,
              signature: h["x-platform-signature"] as string | undefined,
              payload: raw,
              nowSeconds: nowSeconds()
            })
          const answered = verified ? (answers[Math.min(hits.length, answers.length - 1)] ?? 500) : 401
          hits.push({ headers: h, body, verified, answered })
          res.writeHead(answered, { "content-type": "application/json" })
          res.end(answered < 300 ? `{"data":{"id":"x"}}` : `{"error":{"code":"X","message":"refused"}}`)
          Effect.runSync(Deferred.succeed(received, undefined))
        })
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      return { url, hits, received, server }
    }),
    ({ server }) =>
      Effect.promise(
        () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections()
            server.close(() => resolve())
          })
      )
  )

const relayTo = (hubUrl: string, key = signingKey) =>
  ProducerRelay.layer().pipe(
    Layer.provideMerge(HubEventPublisherHttp({ hubUrl, signingKey: Redacted.make(key), timeoutMs: 5_000 })),
    Layer.provideMerge(Layer.merge(ProducerOutboxMemory, IdGeneratorUlid))
  )

const logged = () => {
  const lines: Array<{ readonly level: string; readonly message: unknown }> = []
  const layer = Logger.layer([Logger.make(({ logLevel, message }) => void lines.push({ level: logLevel, message }))])
  return { lines, layer }
}

const t0 = Date.parse("2030-01-01T00:00:00.000Z")

describe("task event relay to the hub", () => {
  it.effect("retries a 503 and delivers exactly once acknowledged, signed afresh with a new delivery id", () =>
    Effect.gen(function* () {
      let now = t0
      const hub = yield* startHub([503, 202], () => Math.floor(now / 1000))
      const advance = (ms: number) =>
        TestClock.adjust(ms).pipe(
          Effect.andThen(
            Effect.sync(() => {
              now += ms
            })
          )
        )
      yield* TestClock.setTime(t0)
      yield* Effect.gen(function* () {
        const outbox = yield* ProducerOutbox
        const relay = yield* ProducerRelay
        const event = delegation()
        yield* outbox.enqueue(event)

        assert.strictEqual(yield* relay.relayDue(), 0)
        const retrying = yield* outbox.get(event.id)
        assert.deepInclude(retrying, { status: "pending", attempts: 1, lastStatusCode: 503 })
        const wait = Date.parse(retrying!.nextAttemptAt!) - t0
        assert.isTrue(wait >= 60_000 && wait <= 66_000, `first retry after ${wait} ms`)
        // Not due yet: nothing is sent.
        yield* advance(59_000)
        assert.strictEqual(yield* relay.relayDue(), 0)
        assert.strictEqual(hub.hits.length, 1)

        yield* advance(11_000)
        assert.strictEqual(yield* relay.relayDue(), 1)
        assert.deepInclude(yield* outbox.get(event.id), {
          status: "delivered",
          attempts: 2,
          lastStatusCode: 202,
          completedAt: new Date(t0 + 70_000).toISOString()
        })
        assert.deepStrictEqual(yield* outbox.pending(10), [])
        // Acknowledged: never sent again.
        yield* advance(13 * 3600_000)
        assert.strictEqual(yield* relay.relayDue(), 0)

        assert.deepStrictEqual(
          hub.hits.map((h) => [h.verified, h.answered]),
          [
            [true, 503],
            [true, 202]
          ]
        )
        const [first, second] = hub.hits
        for (const hit of hub.hits) {
          assert.deepStrictEqual(JSON.parse(hit.body), event)
          assert.strictEqual(hit.headers["x-platform-event-id"], event.id)
          assert.strictEqual(hit.headers["content-type"], "application/json")
          assert.isTrue(isUlid(String(hit.headers["x-platform-delivery"])))
        }
        assert.strictEqual(first!.headers["x-platform-timestamp"], String(t0 / 1000))
        assert.strictEqual(second!.headers["x-platform-timestamp"], String(t0 / 1000 + 59 + 11))
        assert.notStrictEqual(first!.headers["x-platform-signature"], second!.headers["x-platform-signature"])
        assert.notStrictEqual(first!.headers["x-platform-delivery"], second!.headers["x-platform-delivery"])
      }).pipe(Effect.provide(relayTo(hub.url)))
    }).pipe(Effect.scoped)
  )

  it.effect("a 400 leaves the event failed for good: never retried, and logged as an error", () =>
    Effect.gen(function* () {
      let now = t0
      const hub = yield* startHub([400], () => Math.floor(now / 1000))
      const log = logged()
      yield* TestClock.setTime(t0)
      yield* Effect.gen(function* () {
        const outbox = yield* ProducerOutbox
        const relay = yield* ProducerRelay
        const event = delegation()
        yield* outbox.enqueue(event)
        assert.strictEqual(yield* relay.relayDue(), 0)
        assert.deepInclude(yield* outbox.get(event.id), {
          status: "failed",
          attempts: 1,
          lastStatusCode: 400,
          lastError: "The hub answered 400."
        })
        for (let day = 0; day < 3; day++) {
          yield* TestClock.adjust("13 hours")
          now += 13 * 3600_000
          assert.strictEqual(yield* relay.relayDue(), 0)
        }
        assert.strictEqual(hub.hits.length, 1)
        assert.deepStrictEqual(yield* outbox.pending(10), [])
        assert.isTrue(log.lines.some((l) => l.level === "Error" && JSON.stringify(l.message).includes("for good")))
      }).pipe(Effect.provide(Layer.merge(relayTo(hub.url), log.layer)))
    }).pipe(Effect.scoped)
  )

  it.effect("a delivery signed with another key is refused by the hub's check, and so fails for good", () =>
    Effect.gen(function* () {
      const hub = yield* startHub([202], () => Math.floor(t0 / 1000))
      yield* TestClock.setTime(t0)
      yield* Effect.gen(function* () {
        const outbox = yield* ProducerOutbox
        const event = delegation()
        yield* outbox.enqueue(event)
        assert.strictEqual(yield* (yield* ProducerRelay).relayDue(), 0)
        assert.deepInclude(yield* outbox.get(event.id), { status: "failed", lastStatusCode: 401 })
        assert.deepStrictEqual(
          hub.hits.map((h) => h.verified),
          [false]
        )
      }).pipe(Effect.provide(relayTo(hub.url, "another-services-signing-key")))
    }).pipe(Effect.scoped)
  )

  it.effect("a hub that cannot be reached is retried later; the event waits in the outbox", () =>
    Effect.gen(function* () {
      const hub = yield* startHub([202], () => Math.floor(t0 / 1000))
      const closedUrl = hub.url
      yield* Effect.promise(
        () =>
          new Promise<void>((resolve) => {
            hub.server.closeAllConnections()
            hub.server.close(() => resolve())
          })
      )
      yield* TestClock.setTime(t0)
      yield* Effect.gen(function* () {
        const outbox = yield* ProducerOutbox
        const event = delegation()
        yield* outbox.enqueue(event)
        assert.strictEqual(yield* (yield* ProducerRelay).relayDue(), 0)
        const entry = yield* outbox.get(event.id)
        assert.deepInclude(entry, { status: "pending", attempts: 1, lastError: "The hub could not be reached." })
        assert.isUndefined(entry?.lastStatusCode)
        assert.deepStrictEqual(yield* outbox.pending(10), [event])
      }).pipe(Effect.provide(relayTo(closedUrl)))
    }).pipe(Effect.scoped)
  )

  it.live("the server's relay loop sends the outbox when a signing key is set", () =>
    Effect.gen(function* () {
      const hub = yield* startHub([202], () => Math.floor(Date.now() / 1000))
      const data = Layer.merge(ProducerOutboxMemory, IdGeneratorUlid)
      const event = delegation()
      yield* Effect.gen(function* () {
        const outbox = yield* ProducerOutbox
        yield* outbox.enqueue(event)
        yield* Layer.build(
          TasksEventRelay({ hubUrl: hub.url, signingKey: Redacted.make(signingKey), pollMillis: 10 }).pipe(
            Layer.provide(data)
          )
        )
        yield* Deferred.await(hub.received)
        // The answer is recorded just after the hub's reply.
        while ((yield* outbox.get(event.id))?.status !== "delivered") yield* Effect.sleep("5 millis")
        assert.deepStrictEqual(
          hub.hits.map((h) => [h.verified, h.answered]),
          [[true, 202]]
        )
      }).pipe(Effect.provide(data))
    }).pipe(Effect.scoped)
  )

  it.effect("without a signing key the server sends nothing, says that events wait, and keeps them", () =>
    Effect.gen(function* () {
      const hub = yield* startHub([202], () => Math.floor(t0 / 1000))
      const log = logged()
      const data = Layer.merge(ProducerOutboxMemory, IdGeneratorUlid)
      const event = delegation()
      yield* Effect.gen(function* () {
        const outbox = yield* ProducerOutbox
        yield* outbox.enqueue(event)
        yield* Layer.build(
          TasksEventRelay({ hubUrl: hub.url, signingKey: undefined, pollMillis: 10 }).pipe(
            Layer.provide(Layer.merge(data, log.layer))
          )
        )
        yield* TestClock.adjust("1 hour")
        assert.deepStrictEqual(yield* outbox.pending(10), [event])
        assert.deepStrictEqual(hub.hits, [])
        assert.deepStrictEqual(
          log.lines.map((l) => l.level),
          ["Warn"]
        )
        assert.include(JSON.stringify(log.lines[0]!.message), "wait in the outbox")
      }).pipe(Effect.provide(data))
    }).pipe(Effect.scoped)
  )
})
