import { Context, Effect, Redacted, Schema } from "effect"

/** An update the record store did not take. `message` is user-safe; `retryable` says whether to try again. */
export class RecordUpdateFailed extends Schema.TaggedError<RecordUpdateFailed>()("RecordUpdateFailed", {
  message: Schema.String,
  retryable: Schema.Boolean
}) {}

export interface RecordUpdate {
  readonly token: Redacted.Redacted<string>
  readonly baseId: string
  readonly tableId: string
  readonly recordId: string
  /** Field name to value; only these fields change. */
  readonly fields: Readonly<Record<string, string>>
}

/** Writes fields of one record in the organization's external table store (a template's record action). */
export class RecordUpdater extends Context.Service<
  RecordUpdater,
  { readonly update: (input: RecordUpdate) => Effect.Effect<void, RecordUpdateFailed> }
>()("core/decisions/RecordUpdater") {}
