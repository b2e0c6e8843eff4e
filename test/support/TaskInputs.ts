import { Effect, Result, type Schema } from "effect"
import { takeInput } from "../../core/tasks/InputDecoding.ts"
import { mustBeOneOf, Priorities, Statuses, TriageStatuses } from "../../core/tasks/Values.ts"

/** A body decoded as a use case takes it: the canonical values, or the fields the task inbox answers. */
export const decodeBody = <S extends Schema.Decoder<unknown>>(
  schema: S,
  body: unknown
): Result.Result<unknown, Readonly<Record<string, string>>> =>
  Result.mapError(Effect.runSync(Effect.result(takeInput(schema)(body))), (error) => error.fields)

export const statusMessage = mustBeOneOf(Statuses)
export const priorityMessage = mustBeOneOf(Priorities)
export const triageStatusMessage = mustBeOneOf(TriageStatuses)
