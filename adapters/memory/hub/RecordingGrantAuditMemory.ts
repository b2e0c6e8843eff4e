import { Effect, Layer } from "effect"
import { RecordingGrantAudit, type RecordingGrantEntry } from "../../../core/hub/RecordingGrants.ts"

/** The hub's recording access audit in one process's memory (tests, embedding). */
export const RecordingGrantAuditMemory = Layer.sync(RecordingGrantAudit, () => {
  const entries: Array<RecordingGrantEntry> = []
  return RecordingGrantAudit.of({
    record: (entry) => Effect.sync(() => void entries.push({ ...entry })),
    forRecording: (recordingId) =>
      Effect.sync(() =>
        entries
          .filter((e) => e.recordingId === recordingId)
          .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          .map((e) => ({ ...e }))
      )
  })
})
