import { Effect, Layer } from "effect"
import { RecordingAccess, RecordingAccessRefused } from "../../../core/hub/RecordingGrants.ts"

/**
 * A recordings service in memory: `viewers` holds each recording it keeps and whom its playback is granted
 * to (the caller owns the map, so it can look). A change to a recording it does not hold is refused (404),
 * as the service would.
 */
export const RecordingAccessMemory = (viewers: Map<string, Set<string>>): Layer.Layer<RecordingAccess> =>
  Layer.succeed(
    RecordingAccess,
    RecordingAccess.of({
      apply: (_target, change) =>
        Effect.suspend(() => {
          const allowed = viewers.get(change.recordingId)
          if (allowed === undefined) return Effect.fail(new RecordingAccessRefused({ status: 404 }))
          if (change.action === "grant") allowed.add(change.email)
          else allowed.delete(change.email)
          return Effect.void
        })
    })
  )
