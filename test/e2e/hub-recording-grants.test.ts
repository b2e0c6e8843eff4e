import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { RecordingGrantAuditMemory } from "../../adapters/memory/hub/RecordingGrantAuditMemory.ts"
import { RecordingGrantAudit } from "../../core/hub/RecordingGrants.ts"
import { request } from "../support/Http.ts"
import { adminKey, serveAdmin } from "../support/HubAdmin.ts"
import { headersOf, nowMs, serveServiceData, signedPost, type Signed } from "../support/ServiceData.ts"
import { standIn, type Seen, type StandInAnswer } from "../support/StandIn.ts"

const grant = (baseUrl: string, body: unknown, options: Signed = {}) =>
  signedPost(baseUrl, "/api/v1/service-data/recordings/grant", JSON.stringify(body), {
    as: "onboarding-portal",
    ...options
  })

const asOperator = (body: unknown) => ({
  method: "POST",
  headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
  body: JSON.stringify(body)
})

const prospect = { recordingId: "rec-1", email: "Pat@Prospect.test", grantedByEmail: "ada@acme.test" }

/**
 * A meeting-recaps stand-in holding recording `rec-1`, registered through the operator API and promoted live;
 * the service-data plane served over the same registry. The stand-in answers only the API key the hub issued.
 */
const setUp = (options: { readonly live?: boolean } = {}) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(nowMs)
    const admin = yield* serveAdmin()
    const viewers = new Set<string>()
    const state = { apiKey: "" }
    const recordings = (seen: Seen): StandInAnswer => {
      if (seen.headers["x-workspace-api-key"] !== state.apiKey) return { status: 401, json: { error: {} } }
      if (seen.method !== "POST" || seen.url !== "/api/v1/recordings/rec-1/access") return { status: 404, json: {} }
      const change = JSON.parse(seen.body) as { readonly email: string; readonly action: string }
      if (change.action === "grant") viewers.add(change.email)
      else viewers.delete(change.email)
      return { status: 200, json: { data: { ok: true } } }
    }
    const recaps = yield* standIn(recordings)
    const registered = yield* request(
      `${admin.baseUrl}/api/v1/admin/services`,
      asOperator({ id: "meeting-recaps", displayName: "Meeting recaps", baseUrl: recaps.url })
    )
    assert.strictEqual(registered.status, 201)
    state.apiKey = registered.json.data.credentials.apiKey
    if (options.live !== false) {
      yield* admin.registry.recordConformance("meeting-recaps", {
        ranAt: new Date(nowMs).toISOString(),
        passed: true,
        checks: [{ name: "health", passed: true }]
      })
      const promoted = yield* request(`${admin.baseUrl}/api/v1/admin/services/meeting-recaps/promote`, asOperator({}))
      assert.strictEqual(promoted.status, 200)
    }
    const audit = Context.get(yield* Layer.build(RecordingGrantAuditMemory), RecordingGrantAudit)
    const { baseUrl } = yield* serveServiceData({ registry: admin.registry, audit })
    return { baseUrl, recaps, viewers, audit, recordings }
  })

describe("POST /api/v1/service-data/recordings/grant", () => {
  it.effect("forwards grants and revokes to meeting-recaps with its API key, and keeps the hub's audit", () =>
    Effect.gen(function* () {
      const { baseUrl, recaps, viewers, audit } = yield* setUp()
      const granted = yield* grant(baseUrl, prospect)
      assert.strictEqual(granted.status, 200)
      assert.deepStrictEqual(granted.json, {
        data: { recordingId: "rec-1", email: "pat@prospect.test", action: "grant" }
      })
      assert.deepStrictEqual([...viewers], ["pat@prospect.test"])
      assert.deepStrictEqual(JSON.parse(recaps.seen[0]!.body), { email: "pat@prospect.test", action: "grant" })
      // Idempotent for every action: a repeat is 200 again, and the state stays.
      assert.strictEqual((yield* grant(baseUrl, prospect)).status, 200)
      assert.deepStrictEqual([...viewers], ["pat@prospect.test"])
      for (let i = 0; i < 2; i++) {
        const revoked = yield* grant(baseUrl, { ...prospect, action: "revoke" })
        assert.strictEqual(revoked.status, 200)
        assert.strictEqual(revoked.json.data.action, "revoke")
      }
      assert.deepStrictEqual([...viewers], [])
      const entries = yield* audit.forRecording("rec-1")
      assert.deepStrictEqual(
        entries.map((e) => [e.caller, e.email, e.grantedByEmail, e.action, e.outcome, e.at]),
        [
          ...Array(2).fill([
            "onboarding-portal",
            "pat@prospect.test",
            "ada@acme.test",
            "grant",
            "applied",
            new Date(nowMs).toISOString()
          ]),
          ...Array(2).fill([
            "onboarding-portal",
            "pat@prospect.test",
            "ada@acme.test",
            "revoke",
            "applied",
            new Date(nowMs).toISOString()
          ])
        ]
      )
    })
  )

  it.effect("replays the kept answer for a repeated Idempotency-Key without calling meeting-recaps again", () =>
    Effect.gen(function* () {
      const { baseUrl, recaps, audit } = yield* setUp()
      const headers = { "idempotency-key": "grant-pat-1" }
      const first = yield* grant(baseUrl, prospect, { headers })
      const again = yield* grant(baseUrl, prospect, { headers })
      assert.strictEqual(again.status, 200)
      assert.strictEqual(again.text, first.text)
      assert.strictEqual(recaps.seen.length, 1)
      assert.strictEqual((yield* audit.forRecording("rec-1")).length, 1)
      const conflict = yield* grant(baseUrl, { ...prospect, action: "revoke" }, { headers })
      assert.strictEqual(conflict.status, 409)
    })
  )

  it.effect("answers 502 when meeting-recaps refuses, cannot be reached or is not live; a retry runs again", () =>
    Effect.gen(function* () {
      const { baseUrl, recaps, viewers, audit, recordings } = yield* setUp()
      const unknown = yield* grant(baseUrl, { ...prospect, recordingId: "rec-404" })
      assert.strictEqual(unknown.status, 502)
      assert.deepStrictEqual(unknown.json, {
        error: {
          code: "UPSTREAM_ERROR",
          message: "The recordings service could not apply the change. Try again later."
        }
      })
      const headers = { "idempotency-key": "grant-pat-2" }
      recaps.answerWith(() => "drop")
      assert.strictEqual((yield* grant(baseUrl, prospect, { headers })).status, 502)
      recaps.answerWith(() => ({ status: 500, json: { error: { code: "INTERNAL_ERROR" } } }))
      assert.strictEqual((yield* grant(baseUrl, prospect, { headers })).status, 502)
      assert.deepStrictEqual(yield* audit.forRecording("rec-1"), [])
      // Nothing was kept for the key: once the service answers again, the same request goes through.
      recaps.answerWith(recordings)
      const retried = yield* grant(baseUrl, prospect, { headers })
      assert.strictEqual(retried.status, 200)
      assert.deepStrictEqual([...viewers], ["pat@prospect.test"])

      const draft = yield* setUp({ live: false })
      assert.strictEqual((yield* grant(draft.baseUrl, prospect)).status, 502)
      assert.strictEqual(draft.recaps.seen.length, 0)
    })
  )

  it.effect("admits only onboarding-portal, signed over the raw body: every other call is the same 401", () =>
    Effect.gen(function* () {
      const { baseUrl, recaps } = yield* setUp()
      const body = JSON.stringify(prospect)
      const refusals = [
        yield* grant(baseUrl, prospect, { key: "context-key-of-someone-else" }),
        yield* grant(baseUrl, prospect, { caller: "meeting-recaps" }),
        yield* grant(baseUrl, prospect, { caller: "crm" }),
        // The same fields, signed as another spelling of the body.
        yield* grant(baseUrl, prospect, { signed: JSON.stringify(prospect, null, 1) }),
        yield* grant(baseUrl, prospect, { signed: body.replace("rec-1", "rec-2") })
      ]
      for (const answer of refusals) {
        assert.strictEqual(answer.status, 401)
        assert.strictEqual(answer.text, refusals[0]!.text)
        assert.deepStrictEqual(headersOf(answer), headersOf(refusals[0]!))
      }
      assert.strictEqual(recaps.seen.length, 0)
    })
  )

  it.effect("answers 400 for a body that fails validation, before anything is forwarded", () =>
    Effect.gen(function* () {
      const { baseUrl, recaps } = yield* setUp()
      for (const body of [
        { ...prospect, recordingId: "" },
        { ...prospect, recordingId: "x".repeat(65) },
        { ...prospect, recordingId: ".." },
        { ...prospect, email: "not-an-address" },
        { ...prospect, grantedByEmail: undefined },
        { ...prospect, action: "delete" }
      ]) {
        const answer = yield* grant(baseUrl, body)
        assert.strictEqual(answer.status, 400, JSON.stringify(body))
        assert.strictEqual(answer.json.error.code, "VALIDATION_ERROR")
      }
      assert.strictEqual(recaps.seen.length, 0)
    })
  )
})
