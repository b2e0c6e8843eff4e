import { Schema, SchemaGetter } from "effect"

const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i

export const isIsoDateTime = (value: string): boolean => rfc3339.test(value) && Number.isFinite(Date.parse(value))

/** Milliseconds since the epoch as the ISO 8601 UTC string every answer uses. */
export const isoAt = (epochMs: number): string => new Date(epochMs).toISOString()

export const epochMs = (iso: string): number => Date.parse(iso)

/** An RFC 3339 date-time as it arrives (any offset), decoded to its UTC ISO form. */
export const IsoDateTime = Schema.String.check(
  Schema.makeFilter((s: string) => isIsoDateTime(s) || "must be an RFC 3339 date-time, e.g. 2026-01-31T12:00:00Z")
)
  .pipe(
    Schema.decode({
      decode: SchemaGetter.transform((s: string) => new Date(s).toISOString()),
      encode: SchemaGetter.transform((s: string) => s)
    })
  )
  .annotate({ format: "date-time" } as never)
