/**
 * `filterByFormula` for the stand-in: the subset of Airtable's formula language that the platform uses, parsed
 * into a tree and evaluated per record. Anything outside the subset (an operator, a function or a bare name it
 * does not know) is refused as the real API refuses an invalid formula, so an adapter that strays from the
 * subset fails in tests instead of meeting a formula the real API would read differently.
 *
 * Literals: numbers, strings in single or double quotes (`\'`, `\"` and `\\` escapes). Field references:
 * `{Name}`. Operators, lowest first: `= != < > <= >=`, then `&`, then `+ -`, then unary `-`.
 */

export type Formula =
  | { readonly kind: "number"; readonly value: number }
  | { readonly kind: "text"; readonly value: string }
  | { readonly kind: "field"; readonly name: string }
  | { readonly kind: "call"; readonly name: string; readonly args: ReadonlyArray<Formula> }
  | { readonly kind: "binary"; readonly op: BinaryOp; readonly left: Formula; readonly right: Formula }
  | { readonly kind: "negate"; readonly operand: Formula }

type BinaryOp = "=" | "!=" | "<" | ">" | "<=" | ">=" | "&" | "+" | "-"

/** A value while a formula runs: blank is `null`, dates are `Date`s, lists are arrays. */
export type Value = number | string | boolean | null | Date | ReadonlyArray<Value>

/** Why a formula is refused; `detail` follows "The formula for filtering records is invalid: ". */
export class FormulaRefused extends Error {
  constructor(readonly detail: string) {
    super(detail)
  }
}

/** A formula that fails on a record (a date that does not parse): the record is left out. */
class FormulaFailed extends Error {}

const invalid = () => new FormulaRefused("Invalid formula. Please check your formula text.")

type Token =
  | { readonly kind: "number"; readonly value: number }
  | { readonly kind: "text"; readonly value: string }
  | { readonly kind: "field"; readonly name: string }
  | { readonly kind: "name"; readonly name: string }
  | { readonly kind: "punct"; readonly value: string }

const escapes: Record<string, string> = { "\\": "\\", "'": "'", '"': '"', n: "\n", t: "\t" }

const tokenize = (source: string): Array<Token> => {
  const tokens: Array<Token> = []
  let i = 0
  while (i < source.length) {
    const c = source[i]!
    if (/\s/.test(c)) {
      i++
    } else if (/[0-9.]/.test(c)) {
      const match = /^(\d+(\.\d*)?|\.\d+)/.exec(source.slice(i))
      if (match === null) throw invalid()
      tokens.push({ kind: "number", value: Number(match[0]) })
      i += match[0].length
    } else if (c === "'" || c === '"') {
      let value = ""
      i++
      while (source[i] !== c) {
        if (i >= source.length) throw invalid()
        if (source[i] === "\\") {
          const escaped = escapes[source[i + 1] ?? ""]
          if (escaped === undefined) throw invalid()
          value += escaped
          i += 2
        } else value += source[i++]
      }
      i++
      tokens.push({ kind: "text", value })
    } else if (c === "{") {
      const end = source.indexOf("}", i)
      if (end < 0) throw invalid()
      tokens.push({ kind: "field", name: source.slice(i + 1, end) })
      i = end + 1
    } else if (/[A-Za-z_]/.test(c)) {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i))![0]
      tokens.push({ kind: "name", name })
      i += name.length
    } else {
      const op = ["!=", "<=", ">="].find((two) => source.startsWith(two, i)) ?? c
      if (!["!=", "<=", ">=", "=", "<", ">", "&", "+", "-", "(", ")", ","].includes(op)) throw invalid()
      tokens.push({ kind: "punct", value: op })
      i += op.length
    }
  }
  return tokens
}

/** Parses `source` and checks it against the table's field names; throws FormulaRefused. */
export const parseFormula = (source: string, fieldNames: ReadonlyArray<string>): Formula => {
  const tokens = tokenize(source)
  let at = 0
  const peek = (value: string) => {
    const token = tokens[at]
    return token?.kind === "punct" && token.value === value
  }
  const expect = (value: string) => {
    if (!peek(value)) throw invalid()
    at++
  }
  const binary = (ops: ReadonlyArray<string>, next: () => Formula) => (): Formula => {
    let left = next()
    while (ops.some(peek)) {
      const op = (tokens[at++] as { value: BinaryOp }).value
      left = { kind: "binary", op, left, right: next() }
    }
    return left
  }
  const primary = (): Formula => {
    const token = tokens[at++]
    if (token === undefined) throw invalid()
    switch (token.kind) {
      case "number":
      case "text":
        return { kind: token.kind, value: token.value } as Formula
      case "field":
        return { kind: "field", name: token.name }
      case "name": {
        expect("(")
        const args: Array<Formula> = []
        if (!peek(")")) {
          args.push(comparison())
          while (peek(",")) {
            at++
            args.push(comparison())
          }
        }
        expect(")")
        return { kind: "call", name: token.name.toUpperCase(), args }
      }
      case "punct":
        if (token.value === "-") return { kind: "negate", operand: primary() }
        if (token.value !== "(") throw invalid()
        {
          const inner = comparison()
          expect(")")
          return inner
        }
    }
  }
  const additive = binary(["+", "-"], primary)
  const concatenation = binary(["&"], additive)
  const comparison: () => Formula = binary(["=", "!=", "<=", ">=", "<", ">"], concatenation)

  if (tokens.length === 0) throw invalid()
  const formula = comparison()
  if (at !== tokens.length) throw invalid()

  const unknownFields = new Set<string>()
  const unknownFunctions = new Set<string>()
  const check = (node: Formula): void => {
    switch (node.kind) {
      case "field":
        if (!fieldNames.includes(node.name)) unknownFields.add(node.name.toLowerCase())
        return
      case "call": {
        const known = functions[node.name]
        if (known === undefined) unknownFunctions.add(node.name.toLowerCase())
        else if (node.args.length < known.min || node.args.length > known.max) throw invalid()
        return node.args.forEach(check)
      }
      case "binary":
        check(node.left)
        return check(node.right)
      case "negate":
        return check(node.operand)
      default:
        return
    }
  }
  check(formula)
  if (unknownFields.size > 0) throw new FormulaRefused(`Unknown field names: ${[...unknownFields].join(", ")}`)
  if (unknownFunctions.size > 0) {
    throw new FormulaRefused(`Unknown function names: ${[...unknownFunctions].join(", ")}`)
  }
  return formula
}

/** What a formula sees of one record: its id, its fields as formula values, and the time. */
export interface FormulaRecord {
  readonly id: string
  readonly value: (field: string) => Value
  readonly now: number
}

/** Whether the record is kept: a formula yielding 0, false, "", NaN, [], blank or an error leaves it out. */
export const keeps = (formula: Formula, record: FormulaRecord): boolean => {
  try {
    return truthy(evaluate(formula, record))
  } catch (error) {
    if (error instanceof FormulaFailed) return false
    throw error
  }
}

const truthy = (value: Value): boolean => {
  if (value === null || value === false || value === "" || value === 0) return false
  if (typeof value === "number") return !Number.isNaN(value)
  if (Array.isArray(value)) return value.length > 0
  return true
}

const asText = (value: Value): string => {
  if (value === null) return ""
  if (value instanceof Date) return value.toISOString()
  if (Array.isArray(value)) return value.map(asText).join(", ")
  if (typeof value === "boolean") return value ? "1" : "0"
  return String(value)
}

const asNumber = (value: Value): number => {
  if (value === null || value === "") return 0
  if (typeof value === "boolean") return value ? 1 : 0
  if (typeof value === "number") return value
  if (value instanceof Date) return value.getTime()
  const number = Number(asText(value))
  return number
}

const asDate = (value: Value): Date => {
  if (value instanceof Date) return value
  if (typeof value === "string") {
    const text = /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00.000Z` : value
    const date = new Date(text)
    if (!Number.isNaN(date.getTime())) return date
  }
  throw new FormulaFailed()
}

/** Compares two values: numbers and booleans as numbers, a date with anything as dates, the rest as text. */
const compare = (left: Value, right: Value): number => {
  if (left instanceof Date || right instanceof Date) return asDate(left).getTime() - asDate(right).getTime()
  const numeric = (v: Value) => typeof v === "number" || typeof v === "boolean" || v === null
  if (numeric(left) && numeric(right)) return asNumber(left) - asNumber(right)
  if (typeof left === "number" || typeof right === "number") {
    const l = asNumber(left)
    const r = asNumber(right)
    if (!Number.isNaN(l) && !Number.isNaN(r)) return l - r
  }
  const l = asText(left)
  const r = asText(right)
  return l < r ? -1 : l > r ? 1 : 0
}

const units: Record<string, number> = {
  milliseconds: 1,
  seconds: 1_000,
  minutes: 60_000,
  hours: 3_600_000,
  days: 86_400_000,
  weeks: 604_800_000
}
const unitAliases: Record<string, string> = { ms: "milliseconds", s: "seconds", m: "minutes", h: "hours", d: "days" }
const unitOf = (value: Value, fallback: string): string => {
  const text = value === null ? fallback : asText(value).toLowerCase()
  const name = unitAliases[text] ?? (text.endsWith("s") ? text : `${text}s`)
  if (units[name] === undefined && name !== "months" && name !== "years") throw new FormulaFailed()
  return name
}

const addTo = (date: Date, count: number, unit: string): Date => {
  const next = new Date(date.getTime())
  if (unit === "months") next.setUTCMonth(next.getUTCMonth() + count)
  else if (unit === "years") next.setUTCFullYear(next.getUTCFullYear() + count)
  else next.setTime(next.getTime() + count * units[unit]!)
  return next
}

const difference = (a: Date, b: Date, unit: string): number => {
  if (unit === "months" || unit === "years") {
    const months = (a.getUTCFullYear() - b.getUTCFullYear()) * 12 + (a.getUTCMonth() - b.getUTCMonth())
    return Math.trunc(unit === "years" ? months / 12 : months)
  }
  return Math.trunc((a.getTime() - b.getTime()) / units[unit]!)
}

/** `DATETIME_PARSE(text, format)`: without a format, ISO 8601; with one, the tokens YYYY MM DD HH mm ss. */
const parseDate = (text: string, format: string | undefined): Date => {
  if (format === undefined) return asDate(text)
  const parts: Array<string> = []
  const pattern = format.replace(/YYYY|MM|DD|HH|mm|ss|[.*+?^${}()|[\]\\]/g, (token) => {
    if (token.length === 1) return `\\${token}`
    parts.push(token)
    return token === "YYYY" ? "(\\d{4})" : "(\\d{2})"
  })
  const match = new RegExp(`^${pattern}$`).exec(text)
  if (match === null) throw new FormulaFailed()
  const get = (token: string, fallback: number) => {
    const index = parts.indexOf(token)
    return index < 0 ? fallback : Number(match[index + 1])
  }
  return new Date(Date.UTC(get("YYYY", 1970), get("MM", 1) - 1, get("DD", 1), get("HH", 0), get("mm", 0), get("ss", 0)))
}

interface FunctionSpec {
  readonly min: number
  readonly max: number
  /** Arguments are evaluated on demand, so `IF`, `AND` and `OR` evaluate only what they need. */
  readonly run: (args: ReadonlyArray<() => Value>, record: FormulaRecord) => Value
}

const fn = (min: number, max: number, run: FunctionSpec["run"]): FunctionSpec => ({ min, max, run })
/** `FIND` and `SEARCH` are both case-sensitive (a filter ignoring case compares `LOWER` of both sides). */
const find = (args: ReadonlyArray<() => Value>) => {
  const from = args[2] === undefined ? 0 : Math.max(0, asNumber(args[2]()))
  return asText(args[1]!()).indexOf(asText(args[0]!()), from) + 1
}

const functions: Record<string, FunctionSpec> = {
  AND: fn(1, Infinity, (args) => args.every((arg) => truthy(arg()))),
  OR: fn(1, Infinity, (args) => args.some((arg) => truthy(arg()))),
  NOT: fn(1, 1, ([arg]) => !truthy(arg!())),
  IF: fn(2, 3, ([test, then, otherwise]) => (truthy(test!()) ? then!() : otherwise === undefined ? null : otherwise())),
  TRUE: fn(0, 0, () => true),
  FALSE: fn(0, 0, () => false),
  BLANK: fn(0, 0, () => null),
  FIND: fn(2, 3, find),
  SEARCH: fn(2, 3, (args) => {
    const index = find(args)
    return index === 0 ? null : index
  }),
  LOWER: fn(1, 1, ([arg]) => asText(arg!()).toLowerCase()),
  UPPER: fn(1, 1, ([arg]) => asText(arg!()).toUpperCase()),
  TRIM: fn(1, 1, ([arg]) => asText(arg!()).trim()),
  LEN: fn(1, 1, ([arg]) => asText(arg!()).length),
  ARRAYJOIN: fn(1, 2, ([list, separator]) => {
    const value = list!()
    const items = Array.isArray(value) ? value : value === null ? [] : [value]
    return items.map(asText).join(separator === undefined ? ", " : asText(separator()))
  }),
  RECORD_ID: fn(0, 0, (_, record) => record.id),
  NOW: fn(0, 0, (_, record) => new Date(record.now)),
  TODAY: fn(0, 0, (_, record) => new Date(Math.floor(record.now / units.days!) * units.days!)),
  IS_AFTER: fn(2, 2, ([a, b]) => asDate(a!()).getTime() > asDate(b!()).getTime()),
  IS_BEFORE: fn(2, 2, ([a, b]) => asDate(a!()).getTime() < asDate(b!()).getTime()),
  IS_SAME: fn(2, 3, ([a, b, unit]) => {
    const name = unitOf(unit === undefined ? null : unit(), "milliseconds")
    return difference(asDate(a!()), asDate(b!()), name) === 0
  }),
  DATEADD: fn(3, 3, ([date, count, unit]) => addTo(asDate(date!()), asNumber(count!()), unitOf(unit!(), "days"))),
  DATETIME_DIFF: fn(2, 3, ([a, b, unit]) =>
    difference(asDate(a!()), asDate(b!()), unitOf(unit === undefined ? null : unit(), "seconds"))
  ),
  DATETIME_PARSE: fn(1, 2, ([text, format]) =>
    parseDate(asText(text!()), format === undefined ? undefined : asText(format()))
  )
}

const evaluate = (node: Formula, record: FormulaRecord): Value => {
  switch (node.kind) {
    case "number":
    case "text":
      return node.value
    case "field":
      return record.value(node.name)
    case "negate":
      return -asNumber(evaluate(node.operand, record))
    case "call":
      return functions[node.name]!.run(
        node.args.map((arg) => () => evaluate(arg, record)),
        record
      )
    case "binary": {
      const left = evaluate(node.left, record)
      const right = evaluate(node.right, record)
      switch (node.op) {
        case "&":
          return asText(left) + asText(right)
        case "+":
          return typeof left === "string" || typeof right === "string"
            ? asText(left) + asText(right)
            : asNumber(left) + asNumber(right)
        case "-":
          return asNumber(left) - asNumber(right)
        case "=":
          return compare(left, right) === 0
        case "!=":
          return compare(left, right) !== 0
        case "<":
          return compare(left, right) < 0
        case ">":
          return compare(left, right) > 0
        case "<=":
          return compare(left, right) <= 0
        case ">=":
          return compare(left, right) >= 0
      }
    }
  }
}
