import { assert, describe, it } from "@effect/vitest"
import {
  type BaseSchema,
  describePlan,
  type ExpectedTable,
  isComplete,
  planBase
} from "../../adapters/airtable/AirtableBase.ts"
import { AirtableFields } from "../../adapters/airtable/AirtableFields.ts"

const expected: ReadonlyArray<ExpectedTable> = [
  {
    table: "tasks",
    name: "Tasks",
    fields: [
      { name: "Title", type: "singleLineText" },
      { name: "Project", type: "multipleRecordLinks", options: { linkedTable: "projects" } },
      { name: "Hours", type: "number", options: { precision: 2 } }
    ]
  },
  {
    table: "projects",
    name: "Projects",
    fields: [
      { name: "Name", type: "singleLineText" },
      { name: "Lead", type: "multipleRecordLinks", options: { linkedTable: "tasks" } }
    ]
  }
]

/** A base holding exactly `tables`: link fields point at the table the expected map names. */
const baseOf = (tables: ReadonlyArray<ExpectedTable>): BaseSchema => ({
  tables: tables.map((table, t) => ({
    id: `tbl${String(t).padStart(14, "0")}`,
    name: table.name,
    fields: table.fields.map((field, f) => {
      const linked = (field.options as { linkedTable?: string } | undefined)?.linkedTable
      const index = expected.findIndex((e) => e.table === linked)
      return {
        id: `fld${String(t * 100 + f).padStart(14, "0")}`,
        name: field.name,
        type: field.type,
        ...(linked === undefined ? {} : { options: { linkedTableId: `tbl${String(index).padStart(14, "0")}` } })
      }
    })
  }))
})

describe("planning a base against the task inbox's field map", () => {
  it("an empty base gets every table with its fields but the links, then the links", () => {
    const plan = planBase(expected, { tables: [] })
    assert.deepStrictEqual(plan, {
      tables: [
        {
          name: "Tasks",
          fields: [
            { name: "Title", type: "singleLineText" },
            { name: "Hours", type: "number", options: { precision: 2 } }
          ]
        },
        { name: "Projects", fields: [{ name: "Name", type: "singleLineText" }] }
      ],
      fields: [
        { table: "Tasks", field: expected[0]!.fields[1]! },
        { table: "Projects", field: expected[1]!.fields[1]! }
      ],
      mismatches: []
    })
    assert.isFalse(isComplete(plan))
  })

  it("a base holding everything needs nothing, whatever else it holds", () => {
    const base = baseOf(expected)
    const extra: BaseSchema = {
      tables: [
        ...base.tables.map((t) => ({
          ...t,
          fields: [...t.fields, { id: "fldExtra", name: "Extra", type: "checkbox" }]
        })),
        { id: "tblOther", name: "Other", fields: [] }
      ]
    }
    for (const actual of [base, extra]) {
      const plan = planBase(expected, actual)
      assert.deepStrictEqual(plan, { tables: [], fields: [], mismatches: [] })
      assert.isTrue(isComplete(plan))
      assert.deepStrictEqual(describePlan(plan), [])
    }
  })

  it("an existing table gets only the fields it lacks, links after the others", () => {
    const base = baseOf([{ ...expected[0]!, fields: [expected[0]!.fields[0]!] }, expected[1]!])
    const plan = planBase(expected, base)
    assert.deepStrictEqual(plan.tables, [])
    assert.deepStrictEqual(
      plan.fields.map((f) => `${f.table}.${f.field.name}`),
      ["Tasks.Hours", "Tasks.Project"]
    )
    assert.deepStrictEqual(describePlan(plan), [
      "field Tasks.Hours (number)",
      "field Tasks.Project (multipleRecordLinks)"
    ])
  })

  it("a field of another type, a name differing only in case, or a link elsewhere is a mismatch, never remade", () => {
    const base = baseOf(expected)
    const [tasks, projects] = base.tables
    const changed: BaseSchema = {
      tables: [
        {
          ...tasks!,
          fields: [
            { ...tasks!.fields[0]!, name: "title" },
            { ...tasks!.fields[1]!, options: { linkedTableId: tasks!.id } },
            { ...tasks!.fields[2]!, type: "singleLineText" }
          ]
        },
        projects!
      ]
    }
    const plan = planBase(expected, changed)
    assert.deepStrictEqual(plan.tables, [])
    assert.deepStrictEqual(plan.fields, [])
    assert.deepStrictEqual(describePlan(plan), [
      'field Tasks.Title: named "title" in the base',
      "field Tasks.Project: links to another table than Projects",
      "field Tasks.Hours: is a singleLineText field; the task inbox needs number"
    ])
    assert.isFalse(isComplete(plan))
    const renamed = planBase(expected, { tables: [tasks!, { ...projects!, name: "projects" }] })
    assert.deepStrictEqual(renamed.tables, [])
    assert.deepStrictEqual(describePlan(renamed), ['table Projects: the base has a table named "projects" instead'])
  })

  it("the task inbox's own field map on an empty base: every table, each led by a field that can be primary", () => {
    const plan = planBase(AirtableFields, { tables: [] })
    assert.deepStrictEqual(
      plan.tables.map((t) => t.name),
      ["Tasks", "Projects", "Clients", "Outcomes", "Meetings", "Proposals", "Collaborators", "Settings"]
    )
    for (const table of plan.tables) {
      assert.include(
        ["singleLineText", "multilineText", "email", "url", "number", "date", "dateTime"],
        table.fields[0]!.type
      )
      assert.isFalse(table.fields.some((f) => f.type === "multipleRecordLinks"))
    }
    const links = AirtableFields.flatMap((t) => t.fields.filter((f) => f.type === "multipleRecordLinks"))
    assert.strictEqual(plan.fields.length, links.length)
    assert.isTrue(plan.fields.every((f) => f.field.type === "multipleRecordLinks"))
  })
})
