import { assert, describe, it } from "@effect/vitest"
import { airtableTables } from "../../adapters/airtable/AirtableFields.ts"
import { compileFormula } from "../../adapters/airtable/AirtableFormula.ts"
import { TaskLists } from "../../core/tasks/Lists.ts"
import * as Q from "../../core/tasks/Query.ts"
import type { Table } from "../../core/tasks/RecordStore.ts"

const tables = new Map(airtableTables().map((t) => [t.table, t] as const))
const user = "usrAAAAAAAAAAAAAA"
const now = Date.parse("2026-11-28T09:00:00.000Z")

describe("the task inbox's queries as Airtable formulas", () => {
  it("every list of the task inbox compiles exactly: Airtable answers only its records, a page at a time", () => {
    const queries: ReadonlyArray<readonly [Table, Q.Query]> = [
      ["tasks", TaskLists.inbox(user)],
      ["tasks", TaskLists.mine(user, now)],
      ["tasks", TaskLists.sent(user)],
      ["tasks", TaskLists.search(user, { activeOnly: true, projectIds: ["recPPPPPPPPPPPPPP"] })],
      ["tasks", TaskLists.history(user, now, 30)],
      ["tasks", Q.eq("shortCode", "abc12345")],
      ["tasks", Q.has("proposal", "recQQQQQQQQQQQQQQ")],
      ["collaborators", Q.eq("email", "a@example.com")],
      ["projects", Q.contains("name", "acme")],
      ["projects", Q.has("accountManager", user)],
      ["outcomes", Q.has("project", "recPPPPPPPPPPPPPP")],
      [
        "meetings",
        Q.and(Q.atLeast("startTime", "2026-11-01"), Q.not(Q.atLeast("startTime", "2026-11-28T09:00:00.000Z")))
      ],
      ["meetings", Q.and(Q.eq("deepMatchStatus", "Pending"), Q.or(Q.has("attendees", user), Q.has("createdBy", user)))],
      ["proposals", Q.and(Q.has("owner", user), Q.eq("aiStatus", "To Consider"))],
      ["settings", Q.has("user", user)]
    ]
    for (const [table, query] of queries) {
      const compiled = compileFormula(tables, table, query)
      assert.isTrue(compiled.exact, JSON.stringify(query))
      assert.isString(compiled.formula, JSON.stringify(query))
    }
  })

  it("compares links through the ids the linked table's primary field holds, and quotes every value", () => {
    assert.deepStrictEqual(compileFormula(tables, "tasks", Q.has("assignedTo", user)), {
      formula: `FIND(',${user},',","&ARRAYJOIN({Assigned To},",")&",")>0`,
      exact: true
    })
    assert.deepStrictEqual(compileFormula(tables, "tasks", Q.eq("title", "it's a \\ test")), {
      formula: `{Title}='it\\'s a \\\\ test'`,
      exact: true
    })
  })

  it("what cannot be expressed is left wide and marked inexact: the store filters what it reads", () => {
    // Meetings are not selected by a link to them: their primary field is a name, not an id.
    const byMeeting = compileFormula(tables, "proposals", Q.has("meeting", "recMMMMMMMMMMMMMM"))
    assert.deepStrictEqual(byMeeting, { formula: undefined, exact: false })
    const narrowed = compileFormula(tables, "proposals", Q.and(Q.eq("aiStatus", "Accepted"), Q.has("meeting", "recM")))
    assert.deepStrictEqual(narrowed, { formula: "{AI Status}='Accepted'", exact: false })
    assert.deepStrictEqual(compileFormula(tables, "tasks", Q.eq("noSuchField", "x")), {
      formula: "FALSE()",
      exact: true
    })
  })
})
