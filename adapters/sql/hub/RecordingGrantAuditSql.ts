import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { RecordingActions, RecordingGrantAudit, type RecordingGrantEntry } from "../../../core/hub/RecordingGrants.ts"

const Row = Schema.Struct({
  id: Schema.String,
  caller: Schema.String,
  recording_id: Schema.String,
  email: Schema.String,
  granted_by_email: Schema.String,
  action: Schema.Literals(RecordingActions),
  outcome: Schema.Literal("applied"),
  at: Schema.Date
})

const toEntry = (row: typeof Row.Type): RecordingGrantEntry => ({
  id: row.id,
  caller: row.caller,
  recordingId: row.recording_id,
  email: row.email,
  grantedByEmail: row.granted_by_email,
  action: row.action,
  outcome: row.outcome,
  at: row.at.toISOString()
})

/** The RecordingGrantAudit port over `hub.recording_grants` (0015_recording_grants.ts). SQL failures are defects. */
export const RecordingGrantAuditSql: Layer.Layer<RecordingGrantAudit, never, SqlClient.SqlClient> = Layer.effect(
  RecordingGrantAudit,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const byRecording = SqlSchema.findAll({
      Request: Schema.String,
      Result: Row,
      execute: (recordingId) =>
        sql`SELECT * FROM hub.recording_grants WHERE recording_id = ${recordingId} ORDER BY at, id`
    })
    return RecordingGrantAudit.of({
      record: (e) =>
        sql`
          INSERT INTO hub.recording_grants (id, caller, recording_id, email, granted_by_email, action, outcome, at)
          VALUES (${e.id}, ${e.caller}, ${e.recordingId}, ${e.email}, ${e.grantedByEmail}, ${e.action},
            ${e.outcome}, ${e.at}::timestamptz)`.pipe(Effect.asVoid, Effect.orDie),
      forRecording: (recordingId) =>
        byRecording(recordingId).pipe(
          Effect.map((rows) => rows.map(toEntry)),
          Effect.orDie
        )
    })
  })
)
