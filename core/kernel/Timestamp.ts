import { Schema, SchemaGetter } from "effect"

const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i

export const isIsoDateTime = (value: string): boolean => rfc3339.test(value) && Number.isFinite(Date.parse(value))

/** The last second formatted, as `YYYY-MM-DDTHH:MM:SS.`: times within one second differ only in their milliseconds. */
let lastSecond = Number.NaN
let lastSecondText = ""
/** The first millisecond of the year 10000: from there on (and before 1970) the date's own formatting is used. */
const year10000 = 253_402_300_800_000

/**
 * Milliseconds since the epoch as the ISO 8601 UTC string every answer uses (a fraction of a millisecond dropped,
 * as a date drops it). A request stamps several times within one millisecond, so the text of the second is kept
 * and only the milliseconds are written anew.
 */
export const isoAt = (epochMs: number): string => {
  const ms = Math.trunc(epochMs)
  if (!(ms >= 0 && ms < year10000)) return new Date(epochMs).toISOString()
  const second = Math.floor(ms / 1000)
  if (second !== lastSecond) {
    lastSecondText = new Date(second * 1000).toISOString().slice(0, 20)
    lastSecond = second
  }
  const milli = ms - second * 1000
  return `${lastSecondText}${milli < 10 ? "00" : milli < 100 ? "0" : ""}${milli}Z`
}

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
