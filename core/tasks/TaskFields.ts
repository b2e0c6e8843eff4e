import { Schema, SchemaGetter, SchemaTransformation } from "effect"
import { descriptionMaxLength, titleMaxLength } from "./Task.ts"
import {
  canonicalValue,
  mustBeOneOf,
  Origins,
  Priorities,
  priorityAliases,
  Statuses,
  TriageStatuses
} from "./Values.ts"

/**
 * The fields of the task inbox's bodies as Schemas, with the task inbox's own messages. Canonical values come
 * out of decoding: titles trimmed, enumerated values in their canonical spelling.
 */

export const required = "Required"
export const cannotBeCleared = "Cannot be cleared"
export const atMost = (max: number) => `Must be at most ${max} characters`

/** A required key: absent is answered `Required`, as an empty value is. */
export const requiredKey = <S extends Schema.Top>(schema: S) => schema.annotateKey({ messageMissingKey: required })

/**
 * Each field is built on a text schema, `Schema.String` unless a body answers a value that is not a string in
 * words of its own (a proposed change: `Required, a string`).
 */
type Text = Schema.String

/** Trimmed, then 1 to 120 characters. */
export const titleOf = (text: Text) =>
  text
    .annotate({ description: `Trimmed, then 1 to ${titleMaxLength} characters` })
    .pipe(Schema.decode(SchemaTransformation.trim()))
    .check(
      Schema.isMinLength(1, { message: required }),
      Schema.isMaxLength(titleMaxLength, { message: atMost(titleMaxLength) })
    )
export const Title = titleOf(Schema.String)

export const descriptionOf = (text: Text) =>
  text.check(Schema.isMaxLength(descriptionMaxLength, { message: atMost(descriptionMaxLength) }))
export const Description = descriptionOf(Schema.String)

const datePattern = /^\d{4}-\d{2}-\d{2}$/

/** `YYYY-MM-DD`, a real calendar date. */
export const isCalendarDate = (value: string): boolean => {
  if (!datePattern.test(value)) return false
  const date = new Date(`${value}T00:00:00Z`)
  return Number.isFinite(date.getTime()) && date.toISOString().startsWith(value)
}

export const mustBeADate = "Must be a date as YYYY-MM-DD"

export const dateOf = (text: Text) =>
  text.annotate({ format: "date" }).check(Schema.makeFilter((value: string) => isCalendarDate(value) || mustBeADate))
export const DateText = dateOf(Schema.String)

export const Hours = Schema.Finite.check(
  Schema.isGreaterThanOrEqualTo(0, { message: "Must be a number of hours, 0 or more" })
)

/**
 * One of `values`, given in any case, with spaces around, or as one of `aliases`; decoded to the canonical
 * value. Anything else is `Must be one of: <the canonical values>`.
 */
export const Enumerated = <const A extends string>(
  values: readonly [A, ...Array<A>],
  aliases: Readonly<Record<string, A>> = {},
  text: Text = Schema.String
) => {
  const aliasNames = Object.keys(aliases)
  return text
    .annotate({
      description:
        `One of: ${values.join(", ")} (any case)` +
        (aliasNames.length === 0 ? "" : `; also the aliases ${aliasNames.join(", ")}`)
    })
    .pipe(
      Schema.decodeTo(Schema.Literals(values).annotate({ message: mustBeOneOf(values) }), {
        // An unknown value goes on as given, for the literals to refuse with the message.
        decode: SchemaGetter.transform((input: string) => (canonicalValue(values, aliases)(input) ?? input) as A),
        encode: SchemaGetter.transform((value: A): string => value)
      })
    )
}

export const StatusValue = Enumerated(Statuses)
export const PriorityValue = Enumerated(Priorities, priorityAliases)
export const TriageStatusValue = Enumerated(TriageStatuses)
export const OriginValue = Enumerated(Origins)

/** A field of a change that `null` cannot clear: `null` is answered `Cannot be cleared`. */
export const NotClearable = <S extends Schema.Top>(schema: S) =>
  Schema.refine<Schema.NullOr<S>, S["Type"]>((value): value is S["Type"] => value !== null, {
    message: cannotBeCleared
  })(Schema.NullOr(schema))

/** A field of a change that `null` clears: decoded to `cleared` (an empty text). */
export const ClearedTo = <S extends Schema.Top & { readonly Type: string }>(schema: S, cleared: S["Type"]) =>
  Schema.NullOr(schema).pipe(
    Schema.decodeTo(Schema.toType(schema), {
      decode: SchemaGetter.transform((value: S["Type"] | null) => value ?? cleared),
      encode: SchemaGetter.transform((value: S["Type"]): S["Type"] | null => value)
    })
  )
