import {
  apiError,
  invalidFormula,
  invalidRequest,
  modelNotFound,
  recordNotFound,
  unknownFieldName
} from "./ApiError.ts"
import {
  type Collaborator,
  formulaValue,
  isEmpty,
  newId,
  optionsForCreate,
  primaryTypes,
  type StandInField,
  storedValue
} from "./FieldTypes.ts"
import { type Formula, FormulaRefused, keeps, parseFormula, type Value } from "./Formula.ts"

/** A record as the stand-in keeps it: its fields by name, empty values left out. */
export interface StandInRecord {
  readonly id: string
  readonly createdTime: string
  fields: Record<string, unknown>
}

export interface StandInTable {
  readonly id: string
  readonly name: string
  readonly description?: string | undefined
  readonly primaryFieldId: string
  readonly fields: Array<StandInField>
  readonly views: ReadonlyArray<{ readonly id: string; readonly name: string; readonly type: string }>
  /** In creation order, which is the order of a list without `sort`. */
  readonly records: Map<string, StandInRecord>
}

export interface ListParams {
  readonly filterByFormula?: string | undefined
  readonly sort: ReadonlyArray<{ readonly field: string; readonly direction: string }>
  readonly fields?: ReadonlyArray<string> | undefined
  readonly pageSize: number
  readonly maxRecords?: number | undefined
  readonly offset?: string | undefined
  readonly view?: string | undefined
  readonly returnFieldsByFieldId: boolean
}

/** A write of records: `id` for updates, `fields` keyed by field name or id. */
export interface RecordWrite {
  readonly id?: string | undefined
  readonly fields: Record<string, unknown>
}

/** A field to create through the metadata API, as the request gives it. */
export interface FieldInput {
  readonly name: string
  readonly type: string
  readonly description?: string | undefined
  readonly options?: unknown
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The bases, their tables and records, and the operations of the API on them (no HTTP here). */
export class Bases {
  /** baseId -> tableId -> table. */
  readonly bases = new Map<string, Map<string, StandInTable>>()
  /** Open list iterators: the ids a listing found, read page by page through `offset`. */
  private readonly iterators = new Map<string, ReadonlyArray<string>>()

  constructor(
    readonly collaborators: ReadonlyArray<Collaborator>,
    private readonly now: () => number
  ) {}

  base(baseId: string): Map<string, StandInTable> {
    const base = this.bases.get(baseId)
    if (base === undefined) throw modelNotFound()
    return base
  }

  /** A table by id or by name; an unknown one is 403, as the real API answers it. */
  table(baseId: string, idOrName: string): StandInTable {
    const base = this.base(baseId)
    const table = base.get(idOrName) ?? [...base.values()].find((t) => t.name === idOrName)
    if (table === undefined) throw modelNotFound()
    return table
  }

  private fieldOf(table: StandInTable, key: string): StandInField {
    const field = table.fields.find((f) => f.name === key || f.id === key)
    if (field === undefined) throw unknownFieldName(key)
    return field
  }

  /** The table of `table`'s base with this id. */
  private tableById(table: StandInTable, id: string): StandInTable | undefined {
    for (const tables of this.bases.values()) if (tables.has(table.id)) return tables.get(id)
    return undefined
  }

  // ---- the metadata API ----

  tableModel(table: StandInTable) {
    return {
      id: table.id,
      name: table.name,
      ...(table.description === undefined ? {} : { description: table.description }),
      primaryFieldId: table.primaryFieldId,
      fields: table.fields.map(fieldModel),
      views: table.views
    }
  }

  /** Creates a table (`id`: the id a seeded table keeps; otherwise a new one). */
  createTable(baseId: string, body: unknown, id = newId("tbl")) {
    const base = this.base(baseId)
    if (!isObject(body) || typeof body.name !== "string" || !Array.isArray(body.fields)) throw invalidRequest()
    const name = body.name.trim()
    if (name === "") throw invalidRequest("Invalid request: a table needs a name.")
    if ([...base.values()].some((t) => t.name.toLowerCase() === name.toLowerCase())) {
      throw apiError(422, "DUPLICATE_TABLE_NAME", `A table named "${name}" already exists in this base`)
    }
    const inputs = body.fields.map(fieldInput)
    if (inputs.length === 0) throw invalidRequest("Invalid request: a table needs at least one field.")
    if (!primaryTypes.includes(inputs[0]!.type)) {
      throw invalidRequest(`Invalid request: a field of type ${inputs[0]!.type} cannot be the primary field.`)
    }
    inputs.forEach((input, i) => {
      if (input.name === "" || inputs.findIndex((other) => sameName(other.name, input.name)) !== i) {
        throw duplicateField(input.name)
      }
    })
    const checked = inputs.map((input) => ({
      ...input,
      options: optionsForCreate(name, input, (id) => base.has(id))
    }))
    const fields = checked.map((input) => makeField(input, input.options))
    const table: StandInTable = {
      id,
      name,
      description: typeof body.description === "string" ? body.description : undefined,
      primaryFieldId: fields[0]!.id,
      fields,
      views: [{ id: newId("viw"), name: "Grid view", type: "grid" }],
      records: new Map()
    }
    base.set(table.id, table)
    for (const field of fields) this.linkBack(base, table, field)
    return this.tableModel(table)
  }

  createField(baseId: string, tableId: string, body: unknown) {
    const base = this.base(baseId)
    const table = base.get(tableId)
    if (table === undefined) throw modelNotFound()
    const input = fieldInput(body)
    if (input.name === "" || table.fields.some((f) => sameName(f.name, input.name))) throw duplicateField(input.name)
    const field = makeField(
      input,
      optionsForCreate(table.name, input, (id) => base.has(id))
    )
    table.fields.push(field)
    this.linkBack(base, table, field)
    return fieldModel(field)
  }

  /** A link field made through the API gets its inverse in the linked table (a table linking itself gets none). */
  private linkBack(base: Map<string, StandInTable>, table: StandInTable, field: StandInField) {
    if (field.type !== "multipleRecordLinks") return
    const linked = base.get(field.options!.linkedTableId as string)!
    if (linked.id === table.id) return
    let name = table.name
    for (let n = 2; linked.fields.some((f) => sameName(f.name, name)); n++) name = `${table.name} ${n}`
    const inverse = makeField(
      { name, type: "multipleRecordLinks" },
      {
        linkedTableId: table.id,
        isReversed: false,
        prefersSingleRecordLink: false,
        inverseLinkFieldId: field.id
      }
    )
    linked.fields.push(inverse)
    field.options = { ...field.options, inverseLinkFieldId: inverse.id }
  }

  // ---- records ----

  private formulaRecord(table: StandInTable, record: StandInRecord) {
    const displayOf = (field: StandInField, id: string) => {
      const linked = this.tableById(table, field.options?.linkedTableId as string)
      const other = linked?.records.get(id)
      if (linked === undefined || other === undefined) return id
      const primary = linked.fields.find((f) => f.id === linked.primaryFieldId)!
      const value = other.fields[primary.name]
      return isEmpty(value) ? "" : String(value)
    }
    return {
      id: record.id,
      now: this.now(),
      value: (name: string): Value => formulaValue(this.fieldOf(table, name), record.fields[name], displayOf)
    }
  }

  answer(table: StandInTable, record: StandInRecord, only?: ReadonlyArray<string>, byFieldId = false) {
    const fields: Record<string, unknown> = {}
    for (const field of table.fields) {
      const value = record.fields[field.name]
      if (isEmpty(value) || (only !== undefined && !only.includes(field.name))) continue
      fields[byFieldId ? field.id : field.name] = value
    }
    return { id: record.id, createdTime: record.createdTime, fields }
  }

  list(table: StandInTable, params: ListParams) {
    if (!Number.isInteger(params.pageSize) || params.pageSize < 1 || params.pageSize > 100) {
      throw invalidRequest("Invalid request: pageSize must be an integer from 1 to 100.")
    }
    if (params.view !== undefined && !table.views.some((v) => v.id === params.view || v.name === params.view)) {
      throw apiError(422, "VIEW_NAME_NOT_FOUND", `Could not find a view named "${params.view}"`)
    }
    const only = params.fields?.map((key) => this.fieldOf(table, key).name)
    let ids: ReadonlyArray<string>
    let start = 0
    if (params.offset !== undefined) {
      const match = /^(itr[A-Za-z0-9]{14})\/(rec[A-Za-z0-9]{14})$/.exec(params.offset)
      if (match === null) throw apiError(422, "INVALID_OFFSET_VALUE", `The value of offset ${params.offset} is invalid`)
      const found = this.iterators.get(match[1]!)
      if (found === undefined) {
        throw apiError(
          422,
          "LIST_RECORDS_ITERATOR_NOT_AVAILABLE",
          "The list records iterator is no longer available. Restart pagination without an offset."
        )
      }
      ids = found
      start = ids.indexOf(match[2]!) + 1
    } else {
      ids = this.select(table, params)
    }
    const page = ids.slice(start, start + params.pageSize)
    const records = page
      .map((id) => table.records.get(id))
      .filter((record) => record !== undefined)
      .map((record) => this.answer(table, record, only, params.returnFieldsByFieldId))
    if (start + params.pageSize >= ids.length) return { records }
    const iterator = params.offset?.slice(0, 17) ?? newId("itr")
    this.iterators.set(iterator, ids)
    return { records, offset: `${iterator}/${page[page.length - 1]}` }
  }

  /** The ids a listing finds: filtered, sorted (creation order when unsorted), at most `maxRecords`. */
  private select(table: StandInTable, params: ListParams): ReadonlyArray<string> {
    let formula: Formula | undefined
    if (params.filterByFormula !== undefined && params.filterByFormula !== "") {
      try {
        formula = parseFormula(
          params.filterByFormula,
          table.fields.map((f) => f.name)
        )
      } catch (error) {
        if (error instanceof FormulaRefused) throw invalidFormula(error.detail)
        throw error
      }
    }
    let records = [...table.records.values()]
    if (formula !== undefined) records = records.filter((r) => keeps(formula, this.formulaRecord(table, r)))
    const sorts = params.sort.map((s) => {
      if (s.direction !== "asc" && s.direction !== "desc") {
        throw invalidRequest(`Invalid request: sort direction must be asc or desc.`)
      }
      return { field: this.fieldOf(table, s.field), sign: s.direction === "desc" ? -1 : 1 }
    })
    const keyed = records.map((record) => ({ record, view: this.formulaRecord(table, record) }))
    keyed.sort((a, b) => {
      for (const { field, sign } of sorts) {
        const order = sortOrder(a.view.value(field.name), b.view.value(field.name))
        if (order !== 0) return sign * order
      }
      return 0
    })
    const ids = keyed.map(({ record }) => record.id)
    return params.maxRecords === undefined ? ids : ids.slice(0, params.maxRecords)
  }

  get(table: StandInTable, id: string) {
    const record = table.records.get(id)
    if (record === undefined) throw recordNotFound()
    return this.answer(table, record)
  }

  /**
   * Creates (no `id`) or updates records, all or none: every record is checked before any is written (but for
   * what `typecast` adds on the way: a select option, a linked record found by its primary value).
   * `replace` (PUT) clears the fields a write leaves out.
   */
  write(table: StandInTable, writes: ReadonlyArray<RecordWrite>, typecast: boolean, replace = false) {
    const planned = writes.map((write) => {
      const current = write.id === undefined ? undefined : table.records.get(write.id)
      if (write.id !== undefined && current === undefined) throw recordNotFound()
      const fields: Record<string, unknown> = replace || current === undefined ? {} : { ...current.fields }
      for (const [key, value] of Object.entries(write.fields)) {
        const field = this.fieldOf(table, key)
        fields[field.name] = storedValue(field, value, {
          typecast,
          collaborators: this.collaborators,
          linkedRecord: (f, reference, byName) => this.linkedRecord(table, f, reference, byName)
        })
      }
      for (const [name, value] of Object.entries(fields)) if (isEmpty(value)) delete fields[name]
      return { current, fields }
    })
    return planned.map(({ current, fields }) => {
      const record = current ?? { id: newId("rec"), createdTime: new Date(this.now()).toISOString(), fields: {} }
      const before = record.fields
      record.fields = fields
      table.records.set(record.id, record)
      this.updateInverseLinks(table, record.id, before, fields)
      return this.answer(table, record)
    })
  }

  delete(table: StandInTable, ids: ReadonlyArray<string>) {
    for (const id of ids) if (!table.records.has(id)) throw recordNotFound()
    for (const id of ids) {
      const record = table.records.get(id)!
      table.records.delete(id)
      this.updateInverseLinks(table, id, record.fields, {})
    }
    return ids.map((id) => ({ id, deleted: true }))
  }

  private linkedRecord(table: StandInTable, field: StandInField, reference: string, byName: boolean) {
    const linked = this.tableById(table, field.options?.linkedTableId as string)
    if (linked === undefined) return undefined
    if (!byName) return linked.records.has(reference) ? reference : undefined
    const primary = linked.fields.find((f) => f.id === linked.primaryFieldId)!
    const found = [...linked.records.values()].find((r) => r.fields[primary.name] === reference)
    return found?.id ?? this.write(linked, [{ fields: { [primary.name]: reference } }], true)[0]!.id
  }

  /** Keeps the other side of every link field true: a record linked from here lists this one back. */
  private updateInverseLinks(
    table: StandInTable,
    id: string,
    before: Record<string, unknown>,
    after: Record<string, unknown>
  ) {
    for (const field of table.fields) {
      const inverseId = field.options?.inverseLinkFieldId
      if (field.type !== "multipleRecordLinks" || typeof inverseId !== "string") continue
      const linked = this.tableById(table, field.options!.linkedTableId as string)
      const inverse = linked?.fields.find((f) => f.id === inverseId)
      if (linked === undefined || inverse === undefined) continue
      const was = (before[field.name] ?? []) as Array<string>
      const is = (after[field.name] ?? []) as Array<string>
      for (const other of new Set([...was, ...is])) {
        const target = linked.records.get(other)
        if (target === undefined) continue
        const links = ((target.fields[inverse.name] ?? []) as Array<string>).filter((link) => link !== id)
        if (is.includes(other)) links.push(id)
        if (links.length === 0) delete target.fields[inverse.name]
        else target.fields[inverse.name] = links
      }
    }
  }
}

const sameName = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase()

const duplicateField = (name: string) =>
  apiError(422, "DUPLICATE_OR_EMPTY_FIELD_NAME", `Field names must be unique and not empty: "${name}"`)

const fieldInput = (body: unknown): FieldInput => {
  if (!isObject(body) || typeof body.name !== "string" || typeof body.type !== "string") throw invalidRequest()
  const known = ["name", "type", "description", "options"]
  if (Object.keys(body).some((key) => !known.includes(key))) throw invalidRequest()
  return {
    name: body.name.trim(),
    type: body.type,
    description: typeof body.description === "string" ? body.description : undefined,
    options: body.options
  }
}

const makeField = (input: FieldInput, options: Record<string, unknown> | undefined): StandInField => ({
  id: newId("fld"),
  name: input.name,
  type: input.type,
  description: input.description,
  options
})

const fieldModel = (field: StandInField) => ({
  id: field.id,
  name: field.name,
  type: field.type,
  ...(field.description === undefined ? {} : { description: field.description }),
  ...(field.options === undefined ? {} : { options: field.options })
})

/** Sort order of two cell values: blanks first, numbers as numbers, the rest as text. */
const sortOrder = (a: Value, b: Value): number => {
  const blank = (v: Value) => v === null || v === false || (Array.isArray(v) && v.length === 0)
  if (blank(a) || blank(b)) return blank(a) === blank(b) ? 0 : blank(a) ? -1 : 1
  if (typeof a === "number" && typeof b === "number") return a - b
  const text = (v: Value) => (Array.isArray(v) ? v.join(", ") : String(v))
  return text(a).localeCompare(text(b))
}
