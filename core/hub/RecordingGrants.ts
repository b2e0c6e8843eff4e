import { Clock, Context, Effect, Schema } from "effect"
import { normalizeEmail } from "../kernel/Email.ts"
import { UpstreamError } from "../kernel/Errors.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { Transactions } from "../kernel/Transactions.ts"
import { Registry } from "./Registry.ts"

/** The service that keeps recordings and who may play them back. */
export const recordingsServiceId = "meeting-recaps"

export const RecordingActions = ["grant", "revoke"] as const
export type RecordingAction = (typeof RecordingActions)[number]

/**
 * A recording id: 1 to 64 characters, never `.` or `..` (which would leave the path segment it is sent in).
 */
export const RecordingId = Schema.String.check(
  Schema.isBetweenLength(1, 64),
  Schema.makeFilter((id: string) => (id !== "." && id !== "..") || "must not be . or ..")
)

export interface RecordingGrantRequest {
  readonly recordingId: string
  /** The prospect whose playback access changes. */
  readonly email: string
  /** Who asked for the change (the audit's actor). */
  readonly grantedByEmail: string
  readonly action: RecordingAction
}

/** Where and how the hub reaches the recordings service: its registered base URL and API key. */
export interface RecordingsTarget {
  readonly baseUrl: string
  readonly apiKeyHeader: string
  readonly apiKey: string
}

/** The recordings service refused the change (any answer but a 2xx). */
export class RecordingAccessRefused extends Schema.TaggedError<RecordingAccessRefused>()("RecordingAccessRefused", {
  status: Schema.Number
}) {}

/** The recordings service could not be reached in time. */
export class RecordingAccessUnreachable extends Schema.TaggedError<RecordingAccessUnreachable>()(
  "RecordingAccessUnreachable",
  { cause: Schema.optionalKey(Schema.Defect()) }
) {}

/**
 * The recordings service's playback access (adapters/http/hub/RecordingAccessHttp.ts, or memory): one grant
 * or revoke of one person's access to one recording, idempotent on the service's side (granting twice leaves
 * one grant).
 */
export class RecordingAccess extends Context.Service<
  RecordingAccess,
  {
    readonly apply: (
      target: RecordingsTarget,
      change: { readonly recordingId: string; readonly email: string; readonly action: RecordingAction }
    ) => Effect.Effect<void, RecordingAccessRefused | RecordingAccessUnreachable>
  }
>()("core/hub/RecordingAccess") {}

/** One applied change in the hub's own audit: who asked (the calling service and person), when, and what. */
export interface RecordingGrantEntry {
  readonly id: string
  readonly caller: string
  readonly recordingId: string
  readonly email: string
  readonly grantedByEmail: string
  readonly action: RecordingAction
  readonly outcome: "applied"
  readonly at: string
}

/** The hub's audit of recording access changes (`hub.recording_grants`, or memory). */
export class RecordingGrantAudit extends Context.Service<
  RecordingGrantAudit,
  {
    readonly record: (entry: RecordingGrantEntry) => Effect.Effect<void>
    /** A recording's entries, oldest first. */
    readonly forRecording: (recordingId: string) => Effect.Effect<ReadonlyArray<RecordingGrantEntry>>
  }
>()("core/hub/RecordingGrantAudit") {}

const upstream = () =>
  Effect.fail(new UpstreamError({ message: "The recordings service could not apply the change. Try again later." }))

/**
 * Grants or revokes a prospect's playback access to a recording for the onboarding portal: the change is
 * forwarded to the registered, live meeting-recaps service with its API key, and the hub keeps the audit
 * entry in the caller's unit of work (with the kept response of its `Idempotency-Key`). Every action is
 * idempotent: the service keeps a state, so a repeat is 200 again. A service that is not registered and
 * live, refuses, or cannot be reached is UpstreamError (502, retried by the caller); nothing changed, so
 * nothing is audited (the refusal is logged).
 */
export const grantRecordingAccess = Effect.fn("RecordingGrants.grant")(function* (
  caller: string,
  request: RecordingGrantRequest
) {
  const registry = yield* Registry
  const access = yield* RecordingAccess
  const audit = yield* RecordingGrantAudit
  const ids = yield* IdGenerator
  const transactions = yield* Transactions
  const email = normalizeEmail(request.email)
  const registered = yield* registry.credentials(recordingsServiceId).pipe(Effect.orElseSucceed(() => undefined))
  if (registered === undefined || registered.service.status !== "live") {
    yield* Effect.logWarning("no live recordings service is registered", { caller, action: request.action })
    return yield* upstream()
  }
  yield* access
    .apply(
      {
        baseUrl: registered.service.baseUrl,
        apiKeyHeader: registered.service.apiKeyHeader,
        apiKey: registered.credentials.apiKey
      },
      { recordingId: request.recordingId, email, action: request.action }
    )
    .pipe(
      Effect.catchTags({
        RecordingAccessRefused: (refused) =>
          Effect.andThen(
            Effect.logWarning("the recordings service refused a change", {
              caller,
              action: request.action,
              status: refused.status
            }),
            upstream()
          ),
        RecordingAccessUnreachable: () =>
          Effect.andThen(
            Effect.logWarning("the recordings service could not be reached", { caller, action: request.action }),
            upstream()
          )
      })
    )
  const entry: RecordingGrantEntry = {
    id: yield* ids.next,
    caller,
    recordingId: request.recordingId,
    email,
    grantedByEmail: normalizeEmail(request.grantedByEmail),
    action: request.action,
    outcome: "applied",
    at: isoAt(yield* Clock.currentTimeMillis)
  }
  yield* transactions.atomically(audit.record(entry))
  return { recordingId: entry.recordingId, email, action: entry.action }
})
