import { Context, Effect, Layer, Redacted } from "effect"
import { RecordUpdateFailed, RecordUpdater, type RecordUpdate } from "../../../core/decisions/RecordUpdater.ts"

/** What the memory updater was asked to do, and how to make it fail (tests, demos). */
export class RecordUpdaterMemoryLog extends Context.Service<
  RecordUpdaterMemoryLog,
  {
    /** Every update that succeeded, in order, with the token in plain text. */
    readonly updates: Array<Omit<RecordUpdate, "token"> & { readonly token: string }>
    /** Failures to answer, first to last, before updates succeed again. */
    readonly failNext: Array<RecordUpdateFailed>
  }
>()("adapters/memory/decisions/RecordUpdaterMemoryLog") {}

/** A RecordUpdater that records updates in memory; `failNext` scripts failures. */
export const RecordUpdaterMemory: Layer.Layer<RecordUpdater | RecordUpdaterMemoryLog> = Layer.effectContext(
  Effect.sync(() => {
    const log = RecordUpdaterMemoryLog.of({ updates: [], failNext: [] })
    const updater = RecordUpdater.of({
      update: (input) =>
        Effect.suspend(() => {
          const failure = log.failNext.shift()
          if (failure !== undefined) return Effect.fail(failure)
          log.updates.push({ ...input, token: Redacted.value(input.token) })
          return Effect.void
        })
    })
    return Context.make(RecordUpdater, updater).pipe(Context.add(RecordUpdaterMemoryLog, log))
  })
)

export { RecordUpdateFailed }
