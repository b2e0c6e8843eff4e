import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { monotonicFactory } from "ulid"
import { HubAdminAuthLayer } from "../../adapters/http/hub/AdminAuth.ts"
import { EventsApi } from "../../adapters/http/hub/EventsApi.ts"
import { EventsHandlers } from "../../adapters/http/hub/EventsHandlers.ts"
import { serviceRoutes } from "../../adapters/http/ServiceHttp.ts"
import { HubEventWorkers } from "../../apps/server/hub/HubEventsRuntime.ts"
import type { HubEventSettings } from "../../apps/server/hub/HubLayers.ts"
import { sign } from "../../core/auth/Signature.ts"
import { Directory } from "../../core/hub/Directory.ts"
import { EventStore } from "../../core/hub/EventStore.ts"
import { EventProcessor } from "../../core/hub/EventProcessor.ts"
import { NotificationDeliveries } from "../../core/hub/NotificationDeliveries.ts"
import { MailerRecordings } from "../../adapters/memory/MailerMemory.ts"
import { ChannelMessages } from "../../adapters/memory/hub/ChannelsMemory.ts"
import { firstPartyCatalog, seedFirstPartyCatalog } from "../../core/hub/FirstPartyCatalog.ts"
import { Registry } from "../../core/hub/Registry.ts"
import { request, serveForTest } from "../support/Http.ts"
import { hubEventsStack, registerProducer, testSecretsKey } from "../support/HubEvents.ts"
import { IdempotencyLayers } from "../../adapters/http/IdempotencyLayers.ts"
import { IdempotencyStoreMemory } from "../../adapters/memory/IdempotencyStoreMemory.ts"
import { TransactionsMemory } from "../../adapters/memory/TransactionsMemory.ts"

const adminKey = "hub-admin-key-for-event-tests-0123456789"
const ulid = monotonicFactory()
const nowSeconds = () => Math.floor(Date.now() / 1000)

/** Serves the event groups on the memory stack; answers the base URL and the stack's services. */
const serve = (config: Partial<HubEventSettings> = {}, withWorkers = false) =>
  Effect.gen(function* () {
    const services = yield* Layer.build(hubEventsStack(config))
    const provided = Layer.succeedContext(services)
    const routes = serviceRoutes({
      api: EventsApi,
      handlers: EventsHandlers.pipe(Layer.provide(HubAdminAuthLayer({ adminKey: Redacted.make(adminKey) }))),
      errors: { dialect: "hub", maxBodyBytes: 64 * 1024 }
    }).pipe(
      Layer.provide(IdempotencyLayers({ dialect: "hub", secretsKey: testSecretsKey })),
      Layer.provide(Layer.merge(IdempotencyStoreMemory, TransactionsMemory)),
      Layer.provide(provided)
    )
    const { baseUrl } = yield* serveForTest(routes)
    if (withWorkers) yield* Layer.build(HubEventWorkers(3_600_000).pipe(Layer.provide(provided)))
    const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
      Effect.provideContext(effect, services as never) as Effect.Effect<A, E>
    return { baseUrl, run }
  })

const deliverHttp = (
  baseUrl: string,
  options: { readonly secret: string; readonly body: string; readonly eventId: string; readonly timestamp?: number }
) => {
  const timestamp = options.timestamp ?? nowSeconds()
  return request(`${baseUrl}/api/webhooks/events`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-platform-signature": sign({ secret: options.secret, timestamp, payload: options.body }),
      "x-platform-timestamp": String(timestamp),
      "x-platform-event-id": options.eventId,
      "x-platform-delivery": `dlv_${ulid()}`
    },
    body: options.body
  })
}

const notification = (service: string, email: string, title: string) => {
  const id = ulid()
  return {
    id,
    body: JSON.stringify({
      id,
      type: `${service}.notification.created`,
      service,
      occurredAt: new Date().toISOString(),
      subject: { email },
      data: { title, url: "/inbox" },
      contractVersion: "v1"
    })
  }
}

const admin = (baseUrl: string, method: string, path: string, body?: unknown) =>
  request(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

const addAcmeType = (baseUrl: string) =>
  admin(baseUrl, "POST", "/api/v1/admin/event-catalog", {
    type: "acme.notification.created",
    producer: "acme",
    isNotification: true,
    dataSchema: firstPartyCatalog[0]!.dataSchema
  })

describe("POST /api/webhooks/events over HTTP", () => {
  it.live("a 65 KB body of invalid JSON is 413 before it is parsed; small invalid JSON is 400 INVALID_JSON", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const big = yield* request(`${baseUrl}/api/webhooks/events`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{".repeat(65 * 1024)
        })
        assert.strictEqual(big.status, 413)
        assert.strictEqual(big.json.error.code, "PAYLOAD_TOO_LARGE")
        const bad = yield* deliverHttp(baseUrl, { secret: "x", body: "{nope", eventId: ulid() })
        assert.strictEqual(bad.status, 400)
        assert.strictEqual(bad.json.error.code, "INVALID_JSON")
        const unsigned = notification("acme", "ada@example.com", "Hi")
        const refused = yield* request(`${baseUrl}/api/webhooks/events`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: unsigned.body
        })
        assert.strictEqual(refused.status, 400)
        assert.deepStrictEqual(
          refused.json.error.details.map((d: { field: string }) => d.field),
          ["X-Platform-Event-Id", "X-Platform-Delivery"]
        )
      })
    )
  )

  it.live(
    "answers 401, UNKNOWN_EVENT_TYPE, VALIDATION_ERROR with details, 403 for a foreign type, then 202 and 200",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { baseUrl, run } = yield* serve()
          const acmeKey = yield* run(registerProducer("acme"))
          yield* run(registerProducer("other"))
          const unknown = notification("acme", "ada@example.com", "Hi")
          const forged = yield* deliverHttp(baseUrl, { secret: "not-the-key", body: unknown.body, eventId: unknown.id })
          assert.strictEqual(forged.status, 401)
          assert.deepStrictEqual(forged.json, {
            error: { code: "UNAUTHORIZED", message: "Missing or invalid credentials." }
          })
          const unknownType = yield* deliverHttp(baseUrl, { secret: acmeKey, body: unknown.body, eventId: unknown.id })
          assert.strictEqual(unknownType.status, 400)
          assert.strictEqual(unknownType.json.error.code, "UNKNOWN_EVENT_TYPE")

          assert.strictEqual((yield* addAcmeType(baseUrl)).status, 201)
          const invalid = notification("acme", "ada@example.com", "")
          const answer = yield* deliverHttp(baseUrl, { secret: acmeKey, body: invalid.body, eventId: invalid.id })
          assert.strictEqual(answer.status, 400)
          assert.strictEqual(answer.json.error.code, "VALIDATION_ERROR")
          assert.deepStrictEqual(answer.json.error.details[0].field, "data.title")

          const owned = yield* admin(baseUrl, "POST", "/api/v1/admin/event-catalog", {
            type: "other.notification.created",
            producer: "other",
            isNotification: true,
            dataSchema: { type: "object" }
          })
          assert.strictEqual(owned.status, 201)
          const foreign = notification("other", "ada@example.com", "Hi")
          const foreignBody = foreign.body.replace('"service":"other"', '"service":"acme"')
          const notOwned = yield* deliverHttp(baseUrl, { secret: acmeKey, body: foreignBody, eventId: foreign.id })
          assert.strictEqual(notOwned.status, 403)
          assert.strictEqual(notOwned.json.error.code, "FORBIDDEN")

          const good = notification("acme", "ada@example.com", "Report ready")
          const accepted = yield* deliverHttp(baseUrl, { secret: acmeKey, body: good.body, eventId: good.id })
          assert.strictEqual(accepted.status, 202)
          assert.deepStrictEqual(accepted.json, { data: { id: good.id, status: "accepted" } })
          const duplicate = yield* deliverHttp(baseUrl, { secret: acmeKey, body: good.body, eventId: good.id })
          assert.strictEqual(duplicate.status, 200)
          assert.deepStrictEqual(duplicate.json, { data: { id: good.id, status: "duplicate" } })
        })
      )
  )

  it.live(
    "unknown, suspended or oddly named producer and bad, stale or missing signature: one 401, byte for byte",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { baseUrl, run } = yield* serve()
          const acmeKey = yield* run(registerProducer("acme"))
          const goneKey = yield* run(registerProducer("gone"))
          yield* run(Registry.use((registry) => registry.suspend("gone")))
          yield* addAcmeType(baseUrl)
          const as = (service: string) => {
            const event = notification("acme", "ada@example.com", "Hi")
            return { ...event, body: event.body.replace('"service":"acme"', `"service":${JSON.stringify(service)}`) }
          }
          const ghost = as("ghost")
          const gone = as("gone")
          const odd = as("Acme ")
          const good = notification("acme", "ada@example.com", "Hi")
          const answers = [
            yield* deliverHttp(baseUrl, { secret: "any-key", body: ghost.body, eventId: ghost.id }),
            yield* deliverHttp(baseUrl, { secret: goneKey, body: gone.body, eventId: gone.id }),
            yield* deliverHttp(baseUrl, { secret: acmeKey, body: odd.body, eventId: odd.id }),
            yield* deliverHttp(baseUrl, { secret: "not-the-key", body: good.body, eventId: good.id }),
            yield* deliverHttp(baseUrl, {
              secret: acmeKey,
              body: good.body,
              eventId: good.id,
              timestamp: nowSeconds() - 301
            }),
            yield* deliverHttp(baseUrl, {
              secret: acmeKey,
              body: good.body,
              eventId: good.id,
              timestamp: nowSeconds() + 301
            }),
            yield* request(`${baseUrl}/api/webhooks/events`, {
              method: "POST",
              headers: {
                "content-type": "application/json",
                "x-platform-timestamp": String(nowSeconds()),
                "x-platform-event-id": good.id,
                "x-platform-delivery": "dlv_unsigned"
              },
              body: good.body
            })
          ]
          const shape = (answer: (typeof answers)[number]) => ({
            status: answer.status,
            text: answer.text,
            headers: [...answer.headers.entries()].filter(([name]) => name !== "date")
          })
          assert.strictEqual(answers[0]!.status, 401)
          for (const answer of answers.slice(1)) assert.deepStrictEqual(shape(answer), shape(answers[0]!))
          // Within the skew the same delivery is accepted: the refusals above were the signature's alone.
          assert.strictEqual(
            (yield* deliverHttp(baseUrl, { secret: acmeKey, body: good.body, eventId: good.id })).status,
            202
          )
        })
      )
  )

  it.live("past the per-service quota answers 429 RATE_LIMITED with Retry-After", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { baseUrl, run } = yield* serve({ quota: { limit: 1, windowMillis: 60_000 } })
        const acmeKey = yield* run(registerProducer("acme"))
        yield* addAcmeType(baseUrl)
        const first = notification("acme", "ada@example.com", "One")
        assert.strictEqual(
          (yield* deliverHttp(baseUrl, { secret: acmeKey, body: first.body, eventId: first.id })).status,
          202
        )
        const second = notification("acme", "ada@example.com", "Two")
        const limited = yield* deliverHttp(baseUrl, { secret: acmeKey, body: second.body, eventId: second.id })
        assert.strictEqual(limited.status, 429)
        assert.strictEqual(limited.json.error.code, "RATE_LIMITED")
        assert.isAbove(Number(limited.headers.get("retry-after")), 0)
      })
    )
  )

  it.live(
    "1,000 concurrent deliveries with 20% duplicates: 800 answered 202, 200 answered 200, each stored once",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { baseUrl, run } = yield* serve()
          const acmeKey = yield* run(registerProducer("acme"))
          yield* addAcmeType(baseUrl)
          const events = Array.from({ length: 800 }, (_, i) => notification("acme", "ada@example.com", `n${i}`))
          const answers = yield* Effect.forEach(
            [...events, ...events.slice(0, 200)],
            (event) => deliverHttp(baseUrl, { secret: acmeKey, body: event.body, eventId: event.id }),
            { concurrency: 100 }
          )
          assert.strictEqual(answers.filter((a) => a.status === 202).length, 800)
          assert.strictEqual(answers.filter((a) => a.status === 200).length, 200)
          const stored = yield* run(EventStore.use((store) => store.list("acme", 5000)))
          assert.strictEqual(stored.length, 800)
        })
      ),
    { timeout: 60_000 }
  )
})

describe("event catalog over HTTP", () => {
  it.live("the public catalog lists the seeded first-party types, filtered by service", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { baseUrl, run } = yield* serve()
        for (const id of ["decisions", "tasks"]) {
          yield* run(
            Registry.use((r) =>
              r.registerFirstParty({ id, displayName: id, baseUrl: `https://${id}.example`, credentials: {} })
            )
          )
        }
        yield* run(seedFirstPartyCatalog)
        yield* run(seedFirstPartyCatalog)
        const all = yield* request(`${baseUrl}/api/v1/event-catalog`)
        assert.strictEqual(all.status, 200)
        assert.strictEqual(all.json.data.contractVersion, "v1")
        assert.deepStrictEqual(all.json.data.producers, ["decisions", "tasks"])
        assert.deepStrictEqual(
          all.json.data.types.map((t: { type: string; isNotification: boolean }) => [t.type, t.isNotification]),
          [
            ["decisions.notification.created", true],
            ["decisions.notification.settled", true],
            ["tasks.notification.created", true]
          ]
        )
        const tasks = yield* request(`${baseUrl}/api/v1/event-catalog?service=tasks`)
        assert.deepStrictEqual(tasks.json.data.producers, ["tasks"])
        assert.strictEqual(tasks.json.data.types.length, 1)
        const none = yield* request(`${baseUrl}/api/v1/event-catalog?service=nobody`)
        assert.deepStrictEqual(none.json.data, { contractVersion: "v1", producers: [], types: [] })
        const openapi = yield* request(`${baseUrl}/api/v1/openapi`)
        assert.strictEqual(openapi.status, 200)
        for (const path of ["/api/webhooks/events", "/api/v1/event-catalog", "/api/v1/admin/event-catalog"]) {
          assert.property(openapi.json.paths, path)
        }
      })
    )
  )

  it.live("operators add types; a bad type, an unknown producer or a schema that does not compile is 400", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { baseUrl, run } = yield* serve()
        yield* run(registerProducer("acme"))
        const add = (body: unknown) => admin(baseUrl, "POST", "/api/v1/admin/event-catalog", body)
        const noKey = yield* request(`${baseUrl}/api/v1/admin/event-catalog`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ type: "acme.x.done", producer: "acme", dataSchema: {} })
        })
        assert.strictEqual(noKey.status, 401)
        for (const [body, field] of [
          [{ type: "acme.bad-type.done", producer: "acme", dataSchema: {} }, "type"],
          [{ type: "acme.only", producer: "acme", dataSchema: {} }, "type"],
          [{ type: "acme.x.done", producer: "ghost", dataSchema: {} }, "producer"],
          [{ type: "acme.x.done", producer: "acme", dataSchema: { type: "objekt" } }, "dataSchema"],
          [{ type: "acme.x.done", producer: "acme", dataSchema: { typo: true } }, "dataSchema"]
        ] as const) {
          const refused = yield* add(body)
          assert.strictEqual(refused.status, 400, JSON.stringify(body))
          assert.strictEqual(refused.json.error.code, "VALIDATION_ERROR")
          assert.strictEqual(refused.json.error.details[0].field, field)
        }
        const added = yield* add({ type: "acme.x.done", producer: "acme", dataSchema: { type: "object" } })
        assert.strictEqual(added.status, 201)
        assert.deepStrictEqual(added.json.data, {
          type: "acme.x.done",
          producer: "acme",
          isNotification: false,
          dataSchema: { type: "object" }
        })
      })
    )
  )
})

describe("after the acknowledgement", () => {
  it.live("an event of a type that is not a notification is stored processed: nothing is left for the processor", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { baseUrl, run } = yield* serve()
        const acmeKey = yield* run(registerProducer("acme"))
        assert.strictEqual((yield* addAcmeType(baseUrl)).status, 201)
        const plainType = yield* admin(baseUrl, "POST", "/api/v1/admin/event-catalog", {
          type: "acme.report.generated",
          producer: "acme",
          dataSchema: { type: "object" }
        })
        assert.strictEqual(plainType.status, 201)
        const plain = notification("acme", "ada@example.com", "Weekly report")
        const plainBody = plain.body.replace("acme.notification.created", "acme.report.generated")
        const waiting = notification("acme", "ada@example.com", "Report ready")
        assert.strictEqual(
          (yield* deliverHttp(baseUrl, { secret: acmeKey, body: plainBody, eventId: plain.id })).status,
          202
        )
        assert.strictEqual(
          (yield* deliverHttp(baseUrl, { secret: acmeKey, body: waiting.body, eventId: waiting.id })).status,
          202
        )
        const stored = yield* run(EventStore.use((s) => s.find("acme", plain.id)))
        assert.deepStrictEqual([stored?.status, stored?.processedAt], ["processed", stored?.receivedAt])
        assert.strictEqual((yield* run(EventStore.use((s) => s.find("acme", waiting.id))))?.status, "accepted")
        // The processor claims the notification only.
        assert.strictEqual(yield* run(EventProcessor.use((p) => p.runDue())), 1)
        assert.strictEqual((yield* run(EventStore.use((s) => s.find("acme", waiting.id))))?.status, "processed")
      })
    )
  )
})

describe("notifications end to end", () => {
  it.live(
    "a registered service's signed notification lands once in the user's feed, on the bell, then in one batched email",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { baseUrl, run } = yield* serve({ processor: { emailBatchMillis: 1 } })
          const acmeKey = yield* run(registerProducer("acme"))
          assert.strictEqual((yield* addAcmeType(baseUrl)).status, 201)
          yield* run(
            Directory.use((d) =>
              d.createUser({
                id: "usr_ada",
                email: "ada@example.com",
                name: "Ada",
                verified: true,
                createdAt: new Date().toISOString()
              })
            )
          )
          const first = notification("acme", "Ada@Example.com", "Report ready")
          const second = notification("acme", "ada@example.com", "Second report")
          const stranger = notification("acme", "nobody@example.com", "Lost")
          for (const event of [first, first, second, stranger]) {
            const answer = yield* deliverHttp(baseUrl, { secret: acmeKey, body: event.body, eventId: event.id })
            assert.include([200, 202], answer.status)
          }
          // Processing after the acknowledgement; a second run (a crashed processor's retry) files nothing twice.
          assert.strictEqual(yield* run(EventProcessor.use((p) => p.runDue())), 3)
          assert.strictEqual(yield* run(EventProcessor.use((p) => p.runDue())), 0)
          const stored = yield* run(EventStore.use((s) => s.find("acme", stranger.id)))
          assert.strictEqual(stored?.status, "processed")

          const before = yield* admin(baseUrl, "GET", "/api/v1/admin/users/ada%40example.com/notifications")
          assert.strictEqual(before.status, 200)
          assert.deepStrictEqual(
            before.json.data.notifications.map((n: { title: string; eventId: string; url: string }) => [
              n.title,
              n.eventId,
              n.url
            ]),
            [
              ["Second report", second.id, "/inbox"],
              ["Report ready", first.id, "/inbox"]
            ]
          )
          // Unread on the bell; the email waits in the outbox for the digest.
          assert.deepStrictEqual(
            before.json.data.notifications.map((n: { readAt: string | null }) => n.readAt),
            [null, null]
          )
          assert.deepStrictEqual(
            before.json.data.deliveries.map((d: { channel: string; status: string }) => [d.channel, d.status]),
            [
              ["email", "pending"],
              ["email", "pending"]
            ]
          )

          // The digest interval passes: one email with both, oldest first.
          yield* Effect.sleep(5)
          assert.strictEqual(yield* run(NotificationDeliveries.use((d) => d.runDue())), 2)
          assert.strictEqual(yield* run(NotificationDeliveries.use((d) => d.runDue())), 0)
          const emails = yield* run(MailerRecordings.use((m) => m.sent()))
          assert.strictEqual(emails.length, 1)
          assert.strictEqual(emails[0]!.to, "ada@example.com")
          assert.strictEqual(emails[0]!.subject, "2 new notifications")
          assert.isBelow(emails[0]!.text.indexOf("Report ready"), emails[0]!.text.indexOf("Second report"))
          const after = yield* admin(baseUrl, "GET", "/api/v1/admin/users/ada%40example.com/notifications")
          assert.deepStrictEqual(
            after.json.data.deliveries.map((d: { status: string; attempts: number }) => [d.status, d.attempts]),
            [
              ["sent", 1],
              ["sent", 1]
            ]
          )

          const missing = yield* admin(baseUrl, "GET", "/api/v1/admin/users/nobody%40example.com/notifications")
          assert.strictEqual(missing.status, 404)
        })
      )
  )

  it.live("preferences choose the channels; the workers process right after an accept", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { baseUrl, run } = yield* serve({}, true)
        const acmeKey = yield* run(registerProducer("acme"))
        yield* addAcmeType(baseUrl)
        yield* run(
          Directory.use((d) =>
            d.createUser({
              id: "usr_bob",
              email: "bob@example.com",
              name: "Bob",
              verified: true,
              createdAt: new Date().toISOString()
            })
          )
        )
        const changed = yield* admin(baseUrl, "PUT", "/api/v1/admin/users/bob%40example.com/preferences", {
          channels: ["chat", "email"],
          emailMode: "immediate",
          chatWebhookUrl: "https://chat.example/hooks/bob"
        })
        assert.strictEqual(changed.status, 200)
        assert.deepStrictEqual(changed.json.data.preferences, {
          serviceVisible: {},
          channels: ["chat", "email"],
          emailMode: "immediate",
          chatWebhook: true
        })
        const invalid = yield* admin(baseUrl, "PUT", "/api/v1/admin/users/bob%40example.com/preferences", {
          channels: ["fax"]
        })
        assert.strictEqual(invalid.status, 400)
        const privateHook = yield* admin(baseUrl, "PUT", "/api/v1/admin/users/bob%40example.com/preferences", {
          chatWebhookUrl: "https://10.0.0.1/hook"
        })
        assert.strictEqual(privateHook.status, 400)
        assert.strictEqual(privateHook.json.error.details[0].field, "chatWebhookUrl")

        const event = notification("acme", "bob@example.com", "Ping")
        assert.strictEqual(
          (yield* deliverHttp(baseUrl, { secret: acmeKey, body: event.body, eventId: event.id })).status,
          202
        )
        // The poll interval is an hour: only the wake-ups after the accept can have processed and sent it.
        let data: any
        for (let i = 0; i < 400; i++) {
          yield* Effect.sleep(10)
          data = (yield* admin(baseUrl, "GET", "/api/v1/admin/users/bob%40example.com/notifications")).json.data
          if (data.deliveries.length === 2 && data.deliveries.every((d: any) => d.status === "sent")) break
        }
        assert.sameMembers(
          data.deliveries.map((d: { channel: string; status: string }) => `${d.channel}:${d.status}`),
          ["chat:sent", "email:sent"]
        )
        // The bell is off: the notification is kept in the feed, already read.
        assert.isString(data.notifications[0].readAt)
        const chats = yield* run(ChannelMessages.use((c) => c.sent()))
        assert.deepStrictEqual(
          chats.map((c) => [c.to, c.text]),
          [["https://chat.example/hooks/bob", "*Ping*\n<https://hub.example/inbox|Open>"]]
        )
        const emails = yield* run(MailerRecordings.use((m) => m.sent()))
        assert.deepStrictEqual(
          emails.map((m) => [m.to, m.subject]),
          [["bob@example.com", "Ping"]]
        )
      })
    )
  )
})
