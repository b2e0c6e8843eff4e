import { Schema, SchemaGetter } from "effect"

/** An email is compared trimmed and case-insensitively. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase()

export const emailsEqual = (a: string, b: string): boolean => normalizeEmail(a) === normalizeEmail(b)

// Deliberately plain: one @, no spaces, a dot in the domain, at most 254 chars (RFC 5321 path limit).
const emailPattern = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/

export const isEmail = (value: string): boolean => value.length <= 254 && emailPattern.test(value)

/** An email as it arrives: normalised (trimmed, lower case), then validated. */
export const Email = Schema.String.pipe(
  Schema.decode({
    decode: SchemaGetter.transform(normalizeEmail),
    encode: SchemaGetter.transform((s: string) => s)
  }),
  Schema.check(Schema.makeFilter((s: string) => isEmail(s) || "must be an email address"))
).annotate({ title: "Email", format: "email" } as never)
