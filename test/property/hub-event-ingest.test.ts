import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime } from "effect"
import * as fc from "fast-check"
import { monotonicFactory } from "ulid"
import { HubEventStoresSql } from "../../apps/server/hub/HubEventsRuntime.ts"
import { Directory } from "../../core/hub/Directory.ts"
import { EventCatalog } from "../../core/hub/EventCatalog.ts"
import { EventIngest } from "../../core/hub/EventIngest.ts"
import { EventStore } from "../../core/hub/EventStore.ts"
import { notificationDataSchema } from "../../core/hub/FirstPartyCatalog.ts"
import { claimedProducer, dataDepthMax, type EventHeaders } from "../../core/hub/Events.ts"
import { Registry } from "../../core/hub/Registry.ts"
import { sqlBackends } from "../support/Databases.ts"
import { hubEventsSqlOn, hubEventsStack, registerProducer, signedDelivery } from "../support/HubEvents.ts"

const ulid = monotonicFactory()
const nowSeconds = () => Math.floor(Date.now() / 1000)

const eventBody = (fields: Record<string, unknown> = {}) => {
  const id = ulid()
  return {
    id,
    type: "acme.notification.created",
    service: "acme",
    occurredAt: new Date().toISOString(),
    subject: { email: "ada@example.com" },
    data: { title: "Your report is ready" },
    contractVersion: "v1",
    ...fields
  }
}

/** Two producers, their types, and an organization with (and one without) an active install of acme. */
const setUp = Effect.gen(function* () {
  const acmeKey = yield* registerProducer("acme")
  const otherKey = yield* registerProducer("other")
  const catalog = yield* EventCatalog
  yield* catalog.add({
    type: "acme.notification.created",
    producer: "acme",
    isNotification: true,
    dataSchema: notificationDataSchema
  })
  yield* catalog.add({ type: "other.thing.happened", producer: "other", dataSchema: { type: "object" } })
  yield* catalog.add({ type: "acme.usage.recorded", producer: "acme", dataSchema: { type: "object" } })
  const directory = yield* Directory
  const installation = (orgId: string, active: boolean) =>
    directory.saveInstallation({
      orgId,
      serviceId: "acme",
      active,
      epoch: 0,
      consents: { companyId: true, accessClaims: false, embed: false },
      permissions: [],
      updatedAt: new Date().toISOString()
    })
  yield* installation("org_installed", true)
  yield* installation("org_uninstalled", false)
  return { acmeKey, otherKey }
})

interface Delivery {
  readonly headers: EventHeaders
  readonly body: Uint8Array
}

const deliver = (delivery: Delivery) => EventIngest.use((ingest) => ingest.ingest(delivery))

const refusal = (delivery: Delivery) => Effect.map(Effect.flip(deliver(delivery)), (error) => error._tag)

const stored = (service: string, id: string) => EventStore.use((store) => store.find(service, id))

describe("event ingest (memory)", () => {
  let runtime: ManagedRuntime.ManagedRuntime<any, any>
  let keys: { readonly acmeKey: string; readonly otherKey: string }
  beforeAll(async () => {
    runtime = ManagedRuntime.make(hubEventsStack())
    keys = await runtime.runPromise(setUp)
  })
  afterAll(() => runtime.dispose())
  const run = <A>(effect: Effect.Effect<A, any, any>): Promise<A> => runtime.runPromise(effect)

  it("a valid signed delivery is accepted once, then answered as a duplicate", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 200 }),
        fc.integer({ min: -290, max: 290 }),
        async (title, skew) => {
          const body = eventBody({ data: { title } })
          const delivery = signedDelivery({
            secret: keys.acmeKey,
            body: JSON.stringify(body),
            timestamp: nowSeconds() + skew,
            eventId: body.id
          })
          assert.deepStrictEqual(await run(deliver(delivery)), { status: "accepted", id: body.id })
          assert.deepStrictEqual(
            await run(deliver({ ...delivery, headers: { ...delivery.headers, delivery: "retry" } })),
            {
              status: "duplicate",
              id: body.id
            }
          )
          const event = await run(stored("acme", body.id))
          assert.strictEqual(event?.deliveryId, delivery.headers.delivery)
          assert.deepStrictEqual(event?.data, { title })
        }
      ),
      { numRuns: 50 }
    )
  })

  const tamperings = [
    "tampered body",
    "header id differs from body id",
    "stale timestamp",
    "future timestamp",
    "wrong producer's key",
    "type owned by another producer"
  ] as const

  it("tampered, mismatched, stale, future, wrongly keyed or foreign-typed deliveries are refused and never stored", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...tamperings),
        fc.string({ minLength: 1, maxLength: 100 }),
        fc.integer({ min: 305, max: 10_000_000 }),
        async (tampering, title, offset) => {
          const body = eventBody({
            data: { title },
            ...(tampering === "type owned by another producer" ? { type: "other.thing.happened" } : {})
          })
          const text = JSON.stringify(body)
          const now = nowSeconds()
          const timestamp =
            tampering === "stale timestamp" ? now - offset : tampering === "future timestamp" ? now + offset : now
          const secret = tampering === "wrong producer's key" ? keys.otherKey : keys.acmeKey
          const signed = signedDelivery({ secret, body: text, timestamp, eventId: body.id })
          const delivery =
            tampering === "tampered body"
              ? { ...signed, body: new TextEncoder().encode(JSON.stringify({ ...body, data: { title: `${title}!` } })) }
              : tampering === "header id differs from body id"
                ? { ...signed, headers: { ...signed.headers, eventId: ulid() } }
                : signed
          const expected =
            tampering === "header id differs from body id"
              ? "ValidationError"
              : tampering === "type owned by another producer"
                ? "Forbidden"
                : "Unauthorized"
          assert.strictEqual(await run(refusal(delivery)), expected)
          assert.strictEqual(await run(stored("acme", body.id)), undefined)
          assert.strictEqual(await run(stored("other", body.id)), undefined)
        }
      ),
      { numRuns: 120 }
    )
  })

  it("an unknown or suspended producer, or a missing signature, is the same 401", async () => {
    const body = eventBody({ service: "ghost", type: "ghost.notification.created" })
    const text = JSON.stringify(body)
    assert.strictEqual(
      await run(refusal(signedDelivery({ secret: "anything", body: text, timestamp: nowSeconds(), eventId: body.id }))),
      "Unauthorized"
    )
    const valid = eventBody()
    const delivery = signedDelivery({
      secret: keys.acmeKey,
      body: JSON.stringify(valid),
      timestamp: nowSeconds(),
      eventId: valid.id
    })
    assert.strictEqual(
      await run(refusal({ ...delivery, headers: { ...delivery.headers, signature: undefined } })),
      "Unauthorized"
    )
    await run(
      Registry.use((registry) =>
        registry.register({ id: "gone", displayName: "Gone", baseUrl: "https://gone.example" })
      ).pipe(
        Effect.flatMap(({ credentials }) =>
          Effect.gen(function* () {
            yield* Registry.use((registry) => registry.suspend("gone"))
            const goneBody = eventBody({ service: "gone" })
            const tag = yield* refusal(
              signedDelivery({
                secret: credentials.signingKey,
                body: JSON.stringify(goneBody),
                timestamp: nowSeconds(),
                eventId: goneBody.id
              })
            )
            assert.strictEqual(tag, "Unauthorized")
          })
        )
      )
    )
  })

  it("an unknown type is UNKNOWN_EVENT_TYPE and schema-invalid data a validation error with details", async () => {
    const unknown = eventBody({ type: "acme.nothing.happened" })
    assert.strictEqual(
      await run(
        refusal(
          signedDelivery({
            secret: keys.acmeKey,
            body: JSON.stringify(unknown),
            timestamp: nowSeconds(),
            eventId: unknown.id
          })
        )
      ),
      "UnknownEventType"
    )
    const invalid = eventBody({ data: { title: "", url: "https://elsewhere.example/x" } })
    const error = await run(
      Effect.flip(
        deliver(
          signedDelivery({
            secret: keys.acmeKey,
            body: JSON.stringify(invalid),
            timestamp: nowSeconds(),
            eventId: invalid.id
          })
        )
      )
    )
    assert.strictEqual(error._tag, "ValidationError")
    const fields = ((error as { details?: ReadonlyArray<{ field: string }> }).details ?? []).map((d) => d.field)
    assert.includeMembers(fields, ["data.title", "data.url"])
    const malformed = eventBody({ occurredAt: "yesterday", contractVersion: "v2" })
    const shape = await run(
      Effect.flip(
        deliver(
          signedDelivery({
            secret: keys.acmeKey,
            body: JSON.stringify(malformed),
            timestamp: nowSeconds(),
            eventId: malformed.id
          })
        )
      )
    )
    assert.strictEqual(shape._tag, "ValidationError")
    assert.includeMembers(
      ((shape as { details?: ReadonlyArray<{ field: string }> }).details ?? []).map((d) => d.field),
      ["occurredAt", "contractVersion"]
    )
    assert.strictEqual(await run(stored("acme", invalid.id)), undefined)
  })

  it("usage.recorded: no organization is 400, an organization without an active install is 403, an install is 202", async () => {
    const usage = (subject: Record<string, unknown>) => {
      const body = eventBody({
        type: "acme.usage.recorded",
        subject: { email: "ada@example.com", ...subject },
        data: {}
      })
      return {
        id: body.id,
        delivery: signedDelivery({
          secret: keys.acmeKey,
          body: JSON.stringify(body),
          timestamp: nowSeconds(),
          eventId: body.id
        })
      }
    }
    const none = usage({})
    assert.strictEqual(await run(refusal(none.delivery)), "ValidationError")
    for (const orgId of ["org_uninstalled", "org_never_installed"]) {
      const refused = usage({ companyId: orgId })
      assert.strictEqual(await run(refusal(refused.delivery)), "Forbidden")
      assert.strictEqual(await run(stored("acme", refused.id)), undefined)
    }
    const accepted = usage({ companyId: "org_installed" })
    assert.strictEqual((await run(deliver(accepted.delivery))).status, "accepted")
  })

  it("data a store cannot hold (U+0000, half a surrogate pair, nesting past the limit) is a 400, never stored", async () => {
    // Built as text: JSON this deep overflows the stack of JSON.stringify, which is the point.
    const nested = (levels: number) => `${'{"a":'.repeat(levels)}"leaf"${"}".repeat(levels)}`
    const send = (dataJson: string, subject: Record<string, unknown> = {}) => {
      const body = eventBody({ data: "DATA", subject: { email: "ada@example.com", ...subject } })
      const text = JSON.stringify(body).replace('"DATA"', dataJson)
      return {
        id: body.id,
        delivery: signedDelivery({ secret: keys.acmeKey, body: text, timestamp: nowSeconds(), eventId: body.id })
      }
    }
    for (const [dataJson, subject] of [
      ['{"title":"T","note":"a\\u0000b"}', {}],
      ['{"title":"T","note":"broken \\ud83d pair"}', {}],
      ['{"title":"T","key\\udc00":1}', {}],
      ['{"title":"T","list":[{"deep":"\\udfff"}]}', {}],
      ['{"title":"T"}', { companyId: "org\u0000" }],
      // `data` is the first level, so this nests one level past the limit.
      [`{"title":"T","a":${nested(dataDepthMax)}}`, {}],
      [`{"title":"T","a":${nested(10_000)}}`, {}],
      [`{"title":"T","a":${"[".repeat(20_000)}${"]".repeat(20_000)}}`, {}]
    ] as const) {
      const { id, delivery } = send(dataJson, subject)
      assert.strictEqual(await run(refusal(delivery)), "ValidationError", dataJson.slice(0, 80))
      assert.strictEqual(await run(stored("acme", id)), undefined)
    }
    const fine = send(`{"title":"T","emoji":"\\ud83d\\ude00","a":${nested(dataDepthMax - 1)}}`)
    assert.strictEqual((await run(deliver(fine.delivery))).status, "accepted")
  })

  it("only a name shaped like a service id is looked up to verify a signature", () => {
    assert.strictEqual(claimedProducer({ service: "acme" }), "acme")
    assert.strictEqual(claimedProducer({ service: "meeting-recaps" }), "meeting-recaps")
    for (const service of [
      "a\u0000b",
      "meeting--recaps",
      "-recaps",
      "Acme",
      "schema-analysis ",
      "x".repeat(64),
      "",
      7
    ]) {
      assert.isUndefined(claimedProducer({ service }), String(service))
    }
    assert.isUndefined(claimedProducer(["acme"]))
  })

  it("a body over 64 KB is refused before anything else; invalid JSON is InvalidJson; missing delivery headers are 400", async () => {
    const big = new Uint8Array(65 * 1024).fill(0x7b)
    assert.strictEqual(
      await run(
        refusal({
          body: big,
          headers: { signature: undefined, timestamp: undefined, eventId: undefined, delivery: undefined }
        })
      ),
      "PayloadTooLarge"
    )
    const garbage = signedDelivery({
      secret: keys.acmeKey,
      body: "{not json",
      timestamp: nowSeconds(),
      eventId: ulid()
    })
    assert.strictEqual(await run(refusal(garbage)), "InvalidJson")
    const body = eventBody()
    const delivery = signedDelivery({
      secret: keys.acmeKey,
      body: JSON.stringify(body),
      timestamp: nowSeconds(),
      eventId: body.id
    })
    assert.strictEqual(
      await run(refusal({ ...delivery, headers: { ...delivery.headers, delivery: undefined } })),
      "ValidationError"
    )
  })
})

describe("event ingest quota", () => {
  it("past the per-service quota a signed delivery is RateLimited with the seconds to wait", async () => {
    const runtime = ManagedRuntime.make(hubEventsStack({ quota: { limit: 2, windowMillis: 60_000 } }))
    try {
      const { acmeKey } = await runtime.runPromise(setUp)
      const send = () => {
        const body = eventBody()
        return runtime.runPromise(
          Effect.result(
            deliver(
              signedDelivery({ secret: acmeKey, body: JSON.stringify(body), timestamp: nowSeconds(), eventId: body.id })
            )
          )
        )
      }
      // Unsigned requests naming the service do not spend its quota: it is counted after the signature.
      for (let i = 0; i < 5; i++) {
        const body = eventBody()
        const forged = signedDelivery({
          secret: "forged",
          body: JSON.stringify(body),
          timestamp: nowSeconds(),
          eventId: body.id
        })
        assert.strictEqual(await runtime.runPromise(refusal(forged)), "Unauthorized")
      }
      assert.strictEqual((await send())._tag, "Success")
      assert.strictEqual((await send())._tag, "Success")
      const third = await send()
      assert.strictEqual(third._tag, "Failure")
      if (third._tag === "Failure") {
        assert.strictEqual(third.failure._tag, "RateLimited")
        assert.isAbove((third.failure as { retryAfterSeconds: number }).retryAfterSeconds, 0)
      }
    } finally {
      await runtime.dispose()
    }
  })
})

const concurrencyBackends = [
  { name: "memory", layer: () => hubEventsStack() },
  ...sqlBackends.map((backend) => ({
    name: backend.name,
    layer: () => hubEventsStack({}, hubEventsSqlOn(HubEventStoresSql, backend))
  }))
]

describe.each(concurrencyBackends)("event ingest under concurrency ($name)", (backend) => {
  it(
    "1,000 concurrent deliveries with 20% duplicates store each event exactly once",
    { timeout: 120_000 },
    async () => {
      const runtime = ManagedRuntime.make(backend.layer() as Layer.Layer<any, any, never>)
      try {
        const { acmeKey } = await runtime.runPromise(setUp)
        const bodies = Array.from({ length: 800 }, () => eventBody())
        const deliveries = [...bodies, ...bodies.slice(0, 200)].map((body, i) =>
          signedDelivery({
            secret: acmeKey,
            body: JSON.stringify(body),
            timestamp: nowSeconds(),
            eventId: body.id,
            delivery: `dlv_${i}`
          })
        )
        const outcomes = await runtime.runPromise(Effect.forEach(deliveries, deliver, { concurrency: "unbounded" }))
        assert.strictEqual(outcomes.filter((o) => o.status === "accepted").length, 800)
        assert.strictEqual(outcomes.filter((o) => o.status === "duplicate").length, 200)
        const events = await runtime.runPromise(EventStore.use((store) => store.list("acme", 5000)))
        assert.strictEqual(events.length, 800)
        assert.deepStrictEqual(new Set(events.map((e) => e.id)), new Set(bodies.map((b) => b.id)))
      } finally {
        await runtime.dispose()
      }
    }
  )
})
