import { randomBytes } from "node:crypto"
import { apiError, invalidValue } from "./ApiError.ts"
import type { Value } from "./Formula.ts"

/**
 * The field types the stand-in serves: which options creating one requires (the metadata API checks them),
 * how a written value is checked or, with `typecast`, converted, and what a formula sees of a cell.
 */

export interface StandInField {
  readonly id: string
  readonly name: string
  readonly type: string
  readonly description?: string | undefined
  /** As the metadata API answers them (select choices carry ids; links their inverse field). */
  options?: Record<string, unknown> | undefined
}

export interface Collaborator {
  readonly id: string
  readonly email: string
  readonly name: string
}

const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

/** An id as the API writes them: a three-letter prefix and 14 letters and digits. */
export const newId = (prefix: string) =>
  prefix + Array.from(randomBytes(14), (byte) => idAlphabet[byte % idAlphabet.length]).join("")

const textTypes = ["singleLineText", "multilineText", "email", "url", "phoneNumber", "richText"]

/** Types a table's first (primary) field may have. */
export const primaryTypes = [...textTypes, "number", "date", "dateTime"]

/** Types the API computes itself: they cannot be created through the API, nor written. */
const computedTypes = [
  "formula",
  "rollup",
  "lookup",
  "multipleLookupValues",
  "count",
  "autoNumber",
  "createdTime",
  "lastModifiedTime",
  "createdBy",
  "lastModifiedBy",
  "button"
]

const checkboxIcons = ["check", "xCheckbox", "star", "heart", "thumbsUp", "flag", "dot"]
const checkboxColors = ["greenBright", "tealBright", "cyanBright", "blueBright", "purpleBright"].concat([
  "pinkBright",
  "redBright",
  "orangeBright",
  "yellowBright",
  "grayBright"
])
const dateFormats = ["local", "friendly", "us", "european", "iso"]

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Checks `options` of a field to create; answers the options to store, or throws the API's 422. */
export const optionsForCreate = (
  table: string,
  field: { readonly name: string; readonly type: string; readonly options?: unknown },
  linkedTableExists: (id: string) => boolean
): Record<string, unknown> | undefined => {
  const refuse = (why: string) =>
    apiError(
      422,
      "INVALID_FIELD_TYPE_OPTIONS_FOR_CREATE",
      `Invalid options for ${table}.${field.name}: Failed schema validation: ${why}`
    )
  const { type, options } = field
  const unsupported = () =>
    apiError(
      422,
      "UNSUPPORTED_FIELD_TYPE_FOR_CREATE",
      `Invalid options for ${table}.${field.name}: Creating ${type} fields is not supported at this time`
    )
  if (computedTypes.includes(type)) throw unsupported()
  const required = () => {
    if (!isObject(options)) throw refuse("options is missing")
    return options
  }
  const only = (given: Record<string, unknown>, keys: ReadonlyArray<string>) => {
    const extra = Object.keys(given).find((key) => !keys.includes(key))
    if (extra !== undefined) throw refuse(`${extra} is not included in the ${field.name}.(type=${type}) schema`)
  }
  const dateFormat = (given: unknown) => {
    if (!isObject(given) || typeof given.name !== "string" || !dateFormats.includes(given.name)) {
      throw refuse("dateFormat.name must be one of " + dateFormats.join(", "))
    }
    return given
  }
  switch (type) {
    case "singleLineText":
    case "multilineText":
    case "email":
    case "url":
    case "phoneNumber":
    case "richText":
      if (options !== undefined) throw refuse(`options is not included in the ${field.name}.(type=${type}) schema`)
      return undefined
    case "singleCollaborator":
    case "multipleCollaborators":
      if (options !== undefined) only(required(), [])
      return undefined
    case "number": {
      const given = required()
      only(given, ["precision"])
      const precision = given.precision
      if (typeof precision !== "number" || !Number.isInteger(precision) || precision < 0 || precision > 8) {
        throw refuse("options.precision must be an integer from 0 to 8")
      }
      return { precision }
    }
    case "checkbox": {
      const given = required()
      only(given, ["icon", "color"])
      if (typeof given.icon !== "string" || !checkboxIcons.includes(given.icon)) throw refuse("options.icon is missing")
      if (typeof given.color !== "string" || !checkboxColors.includes(given.color)) {
        throw refuse("options.color is missing")
      }
      return { icon: given.icon, color: given.color }
    }
    case "singleSelect":
    case "multipleSelects": {
      const given = required()
      only(given, ["choices"])
      if (!Array.isArray(given.choices)) throw refuse("options.choices is missing")
      const names = new Set<string>()
      const choices = given.choices.map((choice: unknown) => {
        if (!isObject(choice) || typeof choice.name !== "string" || choice.name.trim() === "") {
          throw refuse("options.choices[].name is missing")
        }
        if (names.has(choice.name)) throw refuse(`options.choices has "${choice.name}" twice`)
        names.add(choice.name)
        return {
          id: newId("sel"),
          name: choice.name,
          ...(typeof choice.color === "string" ? { color: choice.color } : {})
        }
      })
      return { choices }
    }
    case "date": {
      const given = required()
      only(given, ["dateFormat"])
      return { dateFormat: dateFormat(given.dateFormat) }
    }
    case "dateTime": {
      const given = required()
      only(given, ["dateFormat", "timeFormat", "timeZone"])
      const timeFormat = given.timeFormat
      if (!isObject(timeFormat) || (timeFormat.name !== "12hour" && timeFormat.name !== "24hour")) {
        throw refuse("options.timeFormat.name must be 12hour or 24hour")
      }
      if (typeof given.timeZone !== "string" || given.timeZone === "") throw refuse("options.timeZone is missing")
      return { dateFormat: dateFormat(given.dateFormat), timeFormat, timeZone: given.timeZone }
    }
    case "multipleRecordLinks": {
      const given = required()
      only(given, ["linkedTableId", "viewIdForRecordSelection"])
      if (typeof given.linkedTableId !== "string" || !linkedTableExists(given.linkedTableId)) {
        throw refuse("options.linkedTableId must name a table of this base")
      }
      return { linkedTableId: given.linkedTableId, isReversed: false, prefersSingleRecordLink: false }
    }
    default:
      throw unsupported()
  }
}

/** What a write needs to know beyond the field: the option to convert, and the records and people it may name. */
export interface WriteContext {
  readonly typecast: boolean
  /** The linked table's record with this id, or (typecast) the id of the record whose primary value is `text`. */
  readonly linkedRecord: (field: StandInField, reference: string, byName: boolean) => string | undefined
  readonly collaborators: ReadonlyArray<Collaborator>
}

const choiceNames = (field: StandInField) =>
  ((field.options?.choices ?? []) as Array<{ name: string }>).map((choice) => choice.name)

const selectOption = (field: StandInField, name: string, typecast: boolean) => {
  if (choiceNames(field).includes(name)) return name
  if (!typecast) {
    throw apiError(
      422,
      "INVALID_MULTIPLE_CHOICE_OPTIONS",
      `Insufficient permissions to create new select option ""${name}""`
    )
  }
  field.options = {
    ...field.options,
    choices: [...((field.options?.choices ?? []) as Array<unknown>), { id: newId("sel"), name }]
  }
  return name
}

/** The value to store for a write of `value` to `field` (null when it clears it), or the API's 422. */
export const storedValue = (field: StandInField, value: unknown, context: WriteContext): unknown => {
  if (value === null || value === undefined) return null
  const { typecast } = context
  const refuse = () => invalidValue(field.name)
  switch (field.type) {
    case "singleLineText":
    case "multilineText":
    case "email":
    case "url":
    case "phoneNumber":
    case "richText":
      if (typeof value === "string") return value
      if (typecast && (typeof value === "number" || typeof value === "boolean")) return String(value)
      throw refuse()
    case "number":
      if (typeof value === "number" && Number.isFinite(value)) return value
      if (typecast && typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) {
        return Number(value)
      }
      throw refuse()
    case "checkbox":
      if (typeof value === "boolean") return value
      if (typecast) return value !== "" && value !== 0 && value !== "false"
      throw refuse()
    case "singleSelect":
      if (typeof value === "string") return selectOption(field, value, typecast)
      throw refuse()
    case "multipleSelects": {
      const list = typecast && typeof value === "string" ? value.split(",").map((v) => v.trim()) : value
      if (!Array.isArray(list) || !list.every((v) => typeof v === "string")) throw refuse()
      return [...new Set(list)].map((name) => selectOption(field, name, typecast))
    }
    case "date":
    case "dateTime": {
      if (typeof value !== "string") throw refuse()
      const strict = field.type === "date" ? /^\d{4}-\d{2}-\d{2}/ : /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/
      const date = new Date(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00.000Z` : value)
      if (Number.isNaN(date.getTime()) || (!typecast && !strict.test(value))) throw refuse()
      return field.type === "date" ? date.toISOString().slice(0, 10) : date.toISOString()
    }
    case "multipleRecordLinks": {
      const list = typecast && typeof value === "string" ? [value] : value
      if (!Array.isArray(list) || !list.every((v) => typeof v === "string")) throw refuse()
      return [
        ...new Set(
          list.map((reference) => {
            const id = context.linkedRecord(field, reference, typecast && !/^rec[A-Za-z0-9]{14}$/.test(reference))
            if (id === undefined) {
              throw apiError(422, "ROW_DOES_NOT_EXIST", `Record ID ${reference} does not exist in this table`)
            }
            return id
          })
        )
      ]
    }
    case "singleCollaborator":
      return collaborator(field, value, context)
    case "multipleCollaborators":
      if (!Array.isArray(value)) throw refuse()
      return value.map((one) => collaborator(field, one, context))
    default:
      throw apiError(
        422,
        "INVALID_VALUE_FOR_COLUMN",
        `Field "${field.name}" cannot accept a value because the field is computed`
      )
  }
}

const collaborator = (field: StandInField, value: unknown, context: WriteContext): Collaborator => {
  const reference = context.typecast && typeof value === "string" ? { email: value } : value
  if (!isObject(reference)) throw invalidValue(field.name)
  const found = context.collaborators.find((person) =>
    typeof reference.id === "string"
      ? person.id === reference.id
      : typeof reference.email === "string" && person.email.toLowerCase() === reference.email.toLowerCase()
  )
  if (found === undefined) throw invalidValue(field.name)
  return { id: found.id, email: found.email, name: found.name }
}

/** Whether a stored value is empty: empty values are left out of answers and are blank to formulas. */
export const isEmpty = (value: unknown) =>
  value === undefined ||
  value === null ||
  value === "" ||
  value === false ||
  (Array.isArray(value) && value.length === 0)

/**
 * What a formula sees of a cell: text and numbers as they are, a checkbox as true or false, a list as a
 * list, a link as the linked records' primary values (display text, never ids), a collaborator as a name.
 */
export const formulaValue = (
  field: StandInField,
  stored: unknown,
  displayOf: (field: StandInField, id: string) => string
): Value => {
  if (field.type === "checkbox") return stored === true
  if (isEmpty(stored)) return null
  switch (field.type) {
    case "multipleRecordLinks":
      return (stored as Array<string>).map((id) => displayOf(field, id))
    case "singleCollaborator":
      return (stored as Collaborator).name
    case "multipleCollaborators":
      return (stored as Array<Collaborator>).map((person) => person.name)
    default:
      return stored as Value
  }
}
