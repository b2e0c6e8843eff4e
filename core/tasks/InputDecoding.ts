import { Effect, Predicate, Schema, SchemaIssue } from "effect"
import { schemaIssues } from "../kernel/FieldIssue.ts"
import { InvalidFields } from "./Errors.ts"

/** Field name to message, as the task inbox's validation answer carries them (`fields`). */
export type FieldErrors = Record<string, string>

/**
 * A decode failure as the task inbox answers it: one message per bad field, the first found, named by its path
 * (`proposedChangesObj.title`) under `prefix`; a body that is not an object at all is `body`. The HTTP
 * layer's rendering of the contract's own decode failures names fields the same way (adapters/http/tasks).
 */
export const fieldErrors = (issue: SchemaIssue.Issue, prefix: ReadonlyArray<string> = []): FieldErrors => {
  const fields: FieldErrors = {}
  for (const found of schemaIssues("body", issue)) {
    const path = found.field === "" ? prefix : [...prefix, found.field]
    const field = path.length === 0 ? "body" : path.join(".")
    if (!Object.hasOwn(fields, field)) fields[field] = found.message
  }
  return fields
}

type OptionalKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? K : never }[keyof T]

/**
 * A body as a caller in TypeScript may write it: an optional key may also be `undefined`, which counts as
 * absent (JSON has no `undefined`, so this changes nothing for the HTTP contract).
 */
export type Loose<T> = Omit<T, OptionalKeys<T>> & { readonly [K in OptionalKeys<T>]?: T[K] | undefined }

/** Objects an input schema of the task inbox produced: a use case takes them as they are. */
const decoded = new WeakSet<object>()

/**
 * An input schema of the task inbox: its decoded values are remembered, so a use case given one (the HTTP
 * contract decodes its body with this same schema) does not check it again.
 */
export const inputSchema = <S extends Schema.Top>(identifier: string, schema: S) =>
  // A check, not a transformation: a check sees the very value decoding answers (a transformation's output
  // would be rebuilt by the schema after it). It never fails. The identifier names the body in the OpenAPI
  // document and in the answer to a body that is not an object (`Expected CreateTaskBody`); given before the
  // check too, as the contract's JSON decoding of a body with transformed fields reads it there (a body with
  // rules across its fields gives it before those too).
  schema
    .annotate({ identifier })
    .check(
      Schema.makeFilter((value: S["Type"]) => {
        if (Predicate.isObject(value)) decoded.add(value)
        return true
      })
    )
    .annotate({ identifier })

/**
 * How a use case takes its input: a value its input schema decoded as it is; anything else (an embedder's
 * call, demo data, a test) decoded with that schema, a bad field answered as InvalidFields with the same
 * messages the HTTP contract gives.
 */
export const takeInput = <S extends Schema.Decoder<unknown>>(schema: S) => {
  const decode = Schema.decodeUnknownEffect(schema, { errors: "all" })
  return (input: unknown, prefix?: ReadonlyArray<string>): Effect.Effect<S["Type"], InvalidFields> =>
    Predicate.isObject(input) && decoded.has(input)
      ? Effect.succeed(input as S["Type"])
      : Effect.mapError(
          decode(withoutUndefined(input)),
          (error) => new InvalidFields({ fields: fieldErrors(error.issue, prefix) })
        )
}

const withoutUndefined = (input: unknown): unknown =>
  Predicate.isObject(input) && !Array.isArray(input) && Object.values(input).includes(undefined)
    ? Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined))
    : input
