/** Reading a block's fields as what they must be: services send them, so each is checked before use. */

/** A string field (a number is shown as its text); anything else is missing. */
export const str = (value: unknown): string | undefined =>
  typeof value === "string" ? value : typeof value === "number" ? String(value) : undefined

/** A list of objects; anything that is not an object is left out. */
export const arr = (value: unknown): ReadonlyArray<Record<string, unknown>> =>
  Array.isArray(value)
    ? value.filter((item): item is Record<string, unknown> => typeof item === "object" && item !== null)
    : []
