import type { Query } from "../../core/tasks/Query.ts"
import type { Table } from "../../core/tasks/RecordStore.ts"
import { yesNoChoice, type AirtableField, type AirtableTable } from "./AirtableFields.ts"

/**
 * A query as a `filterByFormula`. `exact`: the formula keeps exactly the records the query matches. Otherwise it
 * keeps more (a part it cannot express is left out of an `AND`, or makes its `OR` keep everything), and the
 * records read are filtered again with the query itself (core/tasks/Query.ts `matches`): never fewer, never wrong.
 * `formula` is undefined when every record is kept.
 */
export interface CompiledFormula {
  readonly formula: string | undefined
  readonly exact: boolean
}

interface Part {
  /** A formula of the subset, or TRUE/FALSE as the constants. */
  readonly formula: string | true | false
  readonly exact: boolean
}

const always: Part = { formula: true, exact: true }
const never: Part = { formula: false, exact: true }
/** Cannot be expressed: keep everything here, filter after reading. */
const unknown: Part = { formula: true, exact: false }

/** A string literal: single quotes, with `\'` and `\\` escaped. */
export const quote = (text: string): string => `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`

const isoDate = /^\d{4}-\d{2}-\d{2}$/
/** The date-times Airtable answers: UTC, milliseconds. Text order and time order agree between them. */
const isoDateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

const textTypes = new Set<AirtableField["type"]>(["singleLineText", "multilineText", "email", "url", "singleSelect"])

/**
 * What the store's formulas rely on, per field type, as the store reads records back
 * (RecordStoreAirtable.ts): empty values are never held (an empty text, an empty list, an unticked box read as
 * missing), a link reads as the ids of the linked records.
 */
export const compileFormula = (
  tables: ReadonlyMap<Table, AirtableTable>,
  table: Table,
  query: Query
): CompiledFormula => {
  const spec = tables.get(table)
  const fieldOf = (key: string) => spec?.fields.find((field) => field.key === key)
  const ref = (field: AirtableField) => `{${field.name}}`
  /** A link compares through ids when the linked table's primary field holds each record's own id. */
  const linkedById = (field: AirtableField) => {
    const options = field.options
    if (options === undefined || !("linkedTable" in options)) return false
    return tables.get(options.linkedTable)?.fields[0]?.managed === "recordId"
  }

  const leaf = (query: Exclude<Query, { readonly _tag: "All" | "Not" | "And" | "Or" }>): Part => {
    const field = fieldOf(query.field)
    // A field the base does not keep is never held: as missing.
    if (field === undefined) return never
    if (field.name.includes("}")) return unknown
    // A JSON value kept as text reads back as any JSON value: only the query itself can tell.
    if (field.json === true) return unknown
    // A yes or no is not text: as a boolean field of the query, only Eq may hold.
    if (field.yesNo === true && query._tag !== "Eq") return never
    switch (query._tag) {
      case "Eq": {
        if (field.yesNo === true) {
          const choice = typeof query.value === "boolean" ? yesNoChoice(field, query.value) : undefined
          return choice === undefined ? never : { formula: `${ref(field)}=${quote(choice)}`, exact: true }
        }
        if (typeof query.value === "boolean") {
          if (field.type !== "checkbox" || !query.value) return never
          return { formula: `${ref(field)}=TRUE()`, exact: true }
        }
        if (query.value === "") return never
        if (textTypes.has(field.type)) return { formula: `${ref(field)}=${quote(query.value)}`, exact: true }
        // Dates read back as text, but a formula compares them as dates.
        if (field.type === "date" || field.type === "dateTime") return unknown
        return never
      }
      case "Has": {
        if (field.type !== "multipleRecordLinks") return never
        if (!linkedById(field) || query.id.includes(",")) return unknown
        return {
          formula: `FIND(${quote(`,${query.id},`)},","&ARRAYJOIN(${ref(field)},",")&",")>0`,
          exact: true
        }
      }
      case "AtLeast": {
        const exactFor = field.type === "date" ? isoDate : field.type === "dateTime" ? isoDateTime : undefined
        if (exactFor === undefined) return textTypes.has(field.type) ? unknown : never
        // Every text is at least the empty text: the field only has to be there.
        if (query.value === "") return { formula: `${ref(field)}`, exact: true }
        const dateOnly = isoDate.test(query.value)
        if (!exactFor.test(query.value) && !(field.type === "dateTime" && dateOnly)) return unknown
        return {
          formula: `AND(${ref(field)},NOT(IS_BEFORE(${ref(field)},DATETIME_PARSE(${quote(query.value)}))))`,
          exact: true
        }
      }
      case "Contains": {
        if (field.type === "date" || field.type === "dateTime") return unknown
        if (!textTypes.has(field.type)) return never
        const present = `LEN(${ref(field)})>0`
        if (query.text === "") return { formula: present, exact: true }
        return {
          formula: `AND(${present},FIND(LOWER(${quote(query.text)}),LOWER(${ref(field)}))>0)`,
          exact: true
        }
      }
    }
  }

  const compile = (query: Query): Part => {
    switch (query._tag) {
      case "All":
        return always
      case "Not": {
        const inner = compile(query.query)
        if (!inner.exact) return unknown
        if (inner.formula === true) return never
        if (inner.formula === false) return always
        return { formula: `NOT(${inner.formula})`, exact: true }
      }
      case "And": {
        const parts = query.queries.map(compile)
        const exact = parts.every((part) => part.exact)
        if (parts.some((part) => part.formula === false && part.exact)) return never
        const kept = parts.flatMap((part) => (typeof part.formula === "string" ? [part.formula] : []))
        return kept.length === 0
          ? { formula: true, exact }
          : { formula: kept.length === 1 ? kept[0]! : `AND(${kept.join(",")})`, exact }
      }
      case "Or": {
        const parts = query.queries.map(compile)
        const exact = parts.every((part) => part.exact)
        if (parts.some((part) => part.formula === true)) return { formula: true, exact }
        const kept = parts.flatMap((part) => (typeof part.formula === "string" ? [part.formula] : []))
        return kept.length === 0
          ? { formula: false, exact }
          : { formula: kept.length === 1 ? kept[0]! : `OR(${kept.join(",")})`, exact }
      }
      default:
        return leaf(query)
    }
  }

  const compiled = compile(query)
  return {
    formula: compiled.formula === true ? undefined : compiled.formula === false ? "FALSE()" : compiled.formula,
    exact: compiled.exact
  }
}
