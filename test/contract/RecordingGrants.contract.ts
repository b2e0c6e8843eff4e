import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, type Layer, type Scope } from "effect"
import { randomBytes } from "node:crypto"
import {
  RecordingAccess,
  RecordingGrantAudit,
  type RecordingGrantEntry,
  type RecordingsTarget
} from "../../core/hub/RecordingGrants.ts"

const fresh = () => randomBytes(8).toString("hex")

const entry = (recordingId: string, fields: Partial<RecordingGrantEntry> = {}): RecordingGrantEntry => ({
  id: fresh(),
  caller: "onboarding-portal",
  recordingId,
  email: "pat@prospect.test",
  grantedByEmail: "ada@acme.test",
  action: "grant",
  outcome: "applied",
  at: "2030-01-01T10:00:00.000Z",
  ...fields
})

/** The RecordingGrantAudit port's contract (core/hub/RecordingGrants.ts), run once per adapter. */
export const RecordingGrantAuditContract = (name: string, audit: Layer.Layer<RecordingGrantAudit, unknown>) =>
  describe(`RecordingGrantAudit contract (${name})`, () =>
    layer(audit, { excludeTestServices: true })((it) => {
      it.effect("keeps every entry whole and answers a recording's entries oldest first", () =>
        Effect.gen(function* () {
          const store = yield* RecordingGrantAudit
          const recordingId = fresh()
          const later = entry(recordingId, { action: "revoke", at: "2030-01-01T11:00:00.000Z" })
          const earlier = entry(recordingId, { grantedByEmail: "bo@acme.test" })
          yield* store.record(later)
          yield* store.record(earlier)
          yield* store.record(entry(fresh()))
          assert.deepStrictEqual(yield* store.forRecording(recordingId), [earlier, later])
          assert.deepStrictEqual(yield* store.forRecording(fresh()), [])
        })
      )
    }))

/**
 * Makes the adapter over a recordings service that holds `recordings` and answers only the API key given:
 * answers the adapter, where the service is, and whom each recording's playback is granted to (as the
 * service keeps it).
 */
export type RecordingsOver = (
  recordings: ReadonlyArray<string>,
  credentials: { readonly apiKeyHeader: string; readonly apiKey: string }
) => Effect.Effect<
  {
    readonly access: Layer.Layer<RecordingAccess>
    readonly baseUrl: string
    readonly viewers: (recordingId: string) => ReadonlyArray<string>
  },
  never,
  Scope.Scope
>

const credentials = { apiKeyHeader: "X-Workspace-Api-Key", apiKey: "hsk_recordings-api-key" }
// The discard port of the loopback address: nothing listens there.
const nowhere: RecordingsTarget = { ...credentials, baseUrl: "http://127.0.0.1:9" }

/** One change through the adapter. */
const applyWith = (
  access: Layer.Layer<RecordingAccess>,
  target: RecordingsTarget,
  change: { readonly recordingId: string; readonly email: string; readonly action: "grant" | "revoke" }
) =>
  Effect.gen(function* () {
    return yield* (yield* RecordingAccess).apply(target, change)
  }).pipe(Effect.provide(access))

/** The RecordingAccess port's contract, run once per adapter (`unreachable`: a service that cannot be reached). */
export const RecordingAccessContract = (
  name: string,
  over: RecordingsOver,
  unreachable?: Layer.Layer<RecordingAccess>
) =>
  describe(`RecordingAccess contract (${name})`, () => {
    it.live("grants and revokes one person's playback, each as often as asked", () =>
      Effect.gen(function* () {
        const { access, baseUrl, viewers } = yield* over(["rec-1"], credentials)
        const target = { ...credentials, baseUrl }
        const change = { recordingId: "rec-1", email: "pat@prospect.test" }
        yield* applyWith(access, target, { ...change, action: "grant" })
        yield* applyWith(access, target, { ...change, action: "grant" })
        assert.deepStrictEqual(viewers("rec-1"), ["pat@prospect.test"])
        yield* applyWith(access, target, { ...change, action: "revoke" })
        yield* applyWith(access, target, { ...change, action: "revoke" })
        assert.deepStrictEqual(viewers("rec-1"), [])
      })
    )

    it.live("is refused for a recording the service does not hold", () =>
      Effect.gen(function* () {
        const { access, baseUrl } = yield* over(["rec-1"], credentials)
        const failure = yield* Effect.flip(
          applyWith(
            access,
            { ...credentials, baseUrl },
            { recordingId: "rec-2", email: "pat@prospect.test", action: "grant" }
          )
        )
        assert.strictEqual(failure._tag, "RecordingAccessRefused")
      })
    )

    if (unreachable !== undefined) {
      it.live("is unreachable when the service does not answer", () =>
        Effect.gen(function* () {
          const failure = yield* Effect.flip(
            applyWith(unreachable, nowhere, { recordingId: "rec-1", email: "pat@prospect.test", action: "grant" })
          )
          assert.strictEqual(failure._tag, "RecordingAccessUnreachable")
        })
      )
    }
  })
