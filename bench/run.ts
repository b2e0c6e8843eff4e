/**
 * `npm run bench`: throughput of the hot paths, printed as operations per second. Speed is measured
 * here, never asserted in tests. Each case runs for a fixed time after a warm-up.
 */
import { Effect, Layer, Redacted } from "effect"
import { IdempotencyStoreMemory } from "../adapters/memory/IdempotencyStoreMemory.ts"
import { decisionsRoutes } from "../apps/server/Services.ts"
import { sign, verify } from "../core/auth/Signature.ts"
import { mint, verify as verifyToken } from "../core/auth/IdentityToken.ts"
import { step } from "../core/decisions/DecisionMachine.ts"
import type { Decision } from "../core/decisions/Decision.ts"
import { Readiness } from "../core/kernel/index.ts"
import { DecisionsMemory } from "../test/support/DecisionsMemory.ts"
import { serveForTest } from "../test/support/Http.ts"
import { mintToken } from "../test/support/Tokens.ts"
import { hubEventsStack, registerProducer, signedDelivery } from "../test/support/HubEvents.ts"
import { EventCatalog } from "../core/hub/EventCatalog.ts"
import { EventIngest } from "../core/hub/EventIngest.ts"
import { notificationDataSchema } from "../core/hub/FirstPartyCatalog.ts"
import { IdGenerator } from "../core/kernel/Ids.ts"

const results: Array<{ name: string; opsPerSecond: number }> = []

const measure = async (name: string, op: () => unknown | Promise<unknown>, seconds = 1.5) => {
  for (let i = 0; i < 200; i++) await op()
  const until = performance.now() + seconds * 1000
  let count = 0
  const started = performance.now()
  while (performance.now() < until) {
    await op()
    count++
  }
  const opsPerSecond = Math.round(count / ((performance.now() - started) / 1000))
  results.push({ name, opsPerSecond })
  console.log(`${name.padEnd(52)} ${opsPerSecond.toLocaleString("en").padStart(12)} ops/s`)
}

const now = Math.floor(Date.now() / 1000)
const body = JSON.stringify({ id: "01J", type: "decisions.notification.created", data: { x: "y".repeat(800) } })
const signature = sign({ secret: "k", timestamp: now, payload: body })
await measure("AUTH-2 verify (1 KB body)", () =>
  verify({ secret: "k", timestamp: String(now), signature, payload: body, nowSeconds: now })
)

const token = await Effect.runPromise(
  mint({ key: "embed", issuer: "hub", audience: "decisions", subject: "a@b.co", nowSeconds: now })
)
await measure("AUTH-4 identity token verify", () =>
  Effect.runPromise(verifyToken({ token, key: "embed", issuer: "hub", audience: "decisions", nowSeconds: now }))
)

const decision: Decision = {
  id: "01JDECISION0000000000000000",
  organizationId: "org",
  callerName: "agent",
  roleSlug: "ops",
  status: "pending",
  title: "t",
  facts: [],
  links: [],
  options: [
    { id: "a", label: "A" },
    { id: "b", label: "B" }
  ],
  urgency: "normal",
  infoRequests: [],
  assignmentHistory: [],
  createdAt: new Date().toISOString(),
  updatedAt: new Date().toISOString(),
  version: 0
}
await measure("decision machine: choose", () =>
  step(decision, { _tag: "Choose", actor: "a@b.co", optionId: "a" }, Date.now())
)

// HTTP on the memory adapters, through a real loopback socket.
const apiKey = "bench-key"
const embedKey = "bench-embed-key"
await Effect.runPromise(
  Effect.scoped(
    Effect.gen(function* () {
      const { baseUrl } = yield* serveForTest(
        decisionsRoutes({
          production: false,
          build: "bench",
          platformIssuer: "hub",
          decisionsApiKey: Redacted.make(apiKey),
          decisionsEmbedKey: Redacted.make(embedKey),
          tasksApiKey: undefined,
          decisionsCallerRequestsPerMinute: 1_000_000_000,
          decisionsUserRequestsPerMinute: 1_000_000_000
        }).pipe(
          Layer.provide(
            Layer.mergeAll(DecisionsMemory, IdempotencyStoreMemory, Layer.succeed(Readiness)({ check: Effect.void }))
          )
        )
      )
      yield* Effect.promise(async () => {
        const admin = await mintToken({
          key: embedKey,
          issuer: "hub",
          audience: "decisions",
          email: "admin@x.co",
          companyId: "org",
          orgRole: "ADMIN"
        })
        const headers = {
          "content-type": "application/json",
          "x-decisions-api-key": apiKey,
          "x-workspace-token": admin
        }
        await fetch(`${baseUrl}/api/v1/workspace/roles`, {
          method: "POST",
          headers,
          body: JSON.stringify({ slug: "ops", name: "Ops" })
        })
        const key = (
          (await (
            await fetch(`${baseUrl}/api/v1/workspace/keys`, {
              method: "POST",
              headers,
              body: JSON.stringify({ name: "bench" })
            })
          ).json()) as any
        ).data.plaintext
        const caller = { "content-type": "application/json", authorization: `Bearer ${key}` }
        let n = 0
        const payload = JSON.stringify({
          title: "Ship?",
          roleSlug: "ops",
          options: [{ label: "Yes" }, { label: "No" }]
        })
        let lastId = ""
        await measure("HTTP POST /api/v1/decisions (memory, sequential)", async () => {
          const r = await fetch(`${baseUrl}/api/v1/decisions`, {
            method: "POST",
            headers: { ...caller, "idempotency-key": `k${n++}` },
            body: payload
          })
          lastId = ((await r.json()) as any).data.decision.id
        })
        await measure("HTTP GET /api/v1/decisions/{id} (memory, sequential)", async () => {
          await (await fetch(`${baseUrl}/api/v1/decisions/${lastId}`, { headers: caller })).text()
        })
      })
    })
  )
)

// The hub's event ingest through its use case on the memory adapters: verify, validate, dedupe, accept.
await Effect.runPromise(
  Effect.gen(function* () {
    const signingKey = yield* registerProducer("benchbot")
    yield* EventCatalog.use((catalog) =>
      catalog.add({
        type: "benchbot.notification.created",
        producer: "benchbot",
        isNotification: true,
        dataSchema: notificationDataSchema
      })
    )
    const ingest = yield* EventIngest
    const ids = yield* IdGenerator
    const deliver = (id: string) => {
      const body = JSON.stringify({
        id,
        type: "benchbot.notification.created",
        service: "benchbot",
        occurredAt: new Date().toISOString(),
        subject: { email: "ada@acme.test" },
        data: { title: "Report ready", body: "y".repeat(400) },
        contractVersion: "v1"
      })
      return ingest.ingest(
        signedDelivery({ secret: signingKey, body, timestamp: Math.floor(Date.now() / 1000), eventId: id })
      )
    }
    yield* Effect.promise(async () => {
      await measure("hub event ingest: new event accepted (memory)", () =>
        Effect.runPromise(Effect.flatMap(ids.next, deliver))
      )
      const seen = await Effect.runPromise(ids.next)
      await Effect.runPromise(deliver(seen))
      await measure("hub event ingest: duplicate answered (memory)", () => Effect.runPromise(deliver(seen)))
    })
  }).pipe(Effect.provide(hubEventsStack()))
)

console.log(JSON.stringify({ results }))
