/**
 * Which records a list holds, as a value. Written once in core (core/tasks/Lists.ts) and compiled by every
 * record-store adapter: the memory store evaluates it with `matches`, the SQL store turns it into a WHERE
 * clause over the record's fields, an Airtable store into a formula. A field that is missing or null is
 * absent: `Eq` and `Has` are false on it, `Not` of them true.
 */
export type Query =
  | { readonly _tag: "All" }
  /** The field holds exactly this string or boolean. */
  | { readonly _tag: "Eq"; readonly field: string; readonly value: string | boolean }
  /** The link field (an array of record ids) holds this id. */
  | { readonly _tag: "Has"; readonly field: string; readonly id: string }
  /** The text field (an ISO date or date-time) is at or after `value`, compared as text. */
  | { readonly _tag: "AtLeast"; readonly field: string; readonly value: string }
  /** The text field holds `text`, ignoring case. */
  | { readonly _tag: "Contains"; readonly field: string; readonly text: string }
  | { readonly _tag: "Not"; readonly query: Query }
  | { readonly _tag: "And"; readonly queries: ReadonlyArray<Query> }
  | { readonly _tag: "Or"; readonly queries: ReadonlyArray<Query> }

export const all: Query = { _tag: "All" }
export const eq = (field: string, value: string | boolean): Query => ({ _tag: "Eq", field, value })
export const has = (field: string, id: string): Query => ({ _tag: "Has", field, id })
export const atLeast = (field: string, value: string): Query => ({ _tag: "AtLeast", field, value })
export const contains = (field: string, text: string): Query => ({ _tag: "Contains", field, text })
export const not = (query: Query): Query => ({ _tag: "Not", query })
export const and = (...queries: ReadonlyArray<Query>): Query => ({ _tag: "And", queries })
export const or = (...queries: ReadonlyArray<Query>): Query => ({ _tag: "Or", queries })
export const oneOf = (field: string, values: ReadonlyArray<string>): Query => or(...values.map((v) => eq(field, v)))

const own = (fields: Readonly<Record<string, unknown>>, field: string): unknown =>
  Object.hasOwn(fields, field) ? fields[field] : undefined

/** The query as a predicate over a record's fields: how the memory store compiles it. */
export const matches =
  (query: Query) =>
  (fields: Readonly<Record<string, unknown>>): boolean => {
    switch (query._tag) {
      case "All":
        return true
      case "Eq":
        return own(fields, query.field) === query.value
      case "Has": {
        const value = own(fields, query.field)
        return Array.isArray(value) && value.includes(query.id)
      }
      case "AtLeast": {
        const value = own(fields, query.field)
        return typeof value === "string" && value >= query.value
      }
      case "Contains": {
        const value = own(fields, query.field)
        return typeof value === "string" && value.toLowerCase().includes(query.text.toLowerCase())
      }
      case "Not":
        return !matches(query.query)(fields)
      case "And":
        return query.queries.every((q) => matches(q)(fields))
      case "Or":
        return query.queries.some((q) => matches(q)(fields))
    }
  }
