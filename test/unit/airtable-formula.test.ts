import { assert, describe, it } from "@effect/vitest"
import { FormulaRefused, keeps, parseFormula, type Value } from "../fakes/airtable/Formula.ts"

const fields = ["Name", "Status", "Hours", "Done", "Due", "Tags", "Note's"]

const record = (values: Record<string, Value>, id = "recAAAAAAAAAAAAAA") => ({
  id,
  now: Date.parse("2030-06-15T12:00:00Z"),
  value: (name: string) => values[name] ?? null
})

const keep = (formula: string, values: Record<string, Value>, id?: string) =>
  keeps(parseFormula(formula, fields), record(values, id))

const refusal = (formula: string) => {
  try {
    parseFormula(formula, fields)
  } catch (error) {
    if (error instanceof FormulaRefused) return error.detail
    throw error
  }
  return assert.fail(`${formula} was accepted`)
}

describe("the stand-in's filterByFormula", () => {
  it("leaves out a record whose formula yields 0, false, an empty text, an empty list, blank or an error", () => {
    for (const formula of ["0", "FALSE()", "''", "BLANK()", "{Tags}", "{Name}", "IS_AFTER({Due}, '2030-01-01')"]) {
      assert.isFalse(keep(formula, { Tags: [] }), formula)
    }
    for (const formula of ["1", "TRUE()", "'x'", "{Tags}", "-1"]) {
      assert.isTrue(keep(formula, { Tags: ["a"] }), formula)
    }
  })

  it("compares text exactly, numbers as numbers, and blank equal to an empty text and to 0", () => {
    assert.isTrue(keep("{Status} = 'Open'", { Status: "Open" }))
    assert.isFalse(keep("{Status} = 'open'", { Status: "Open" }))
    assert.isTrue(keep("{Status} != 'Open'", {}))
    assert.isTrue(keep("{Status} = ''", {}))
    assert.isTrue(keep("{Hours} = BLANK()", {}))
    assert.isTrue(keep("{Hours} >= 2", { Hours: 10 }))
    assert.isFalse(keep("{Hours} >= 20", { Hours: 3 }))
    assert.isTrue(keep("{Hours} + 1 = 4", { Hours: 3 }))
    assert.isTrue(keep("{Done} = TRUE()", { Done: true }))
    assert.isTrue(keep("NOT({Done})", { Done: false }))
    assert.isTrue(keep("{Name} & '!' = 'a' & '!'", { Name: "a" }))
    assert.isTrue(keep("{Due} >= '2030-01-01'", { Due: "2030-02-01" }))
  })

  it("reads quoted strings with their escapes and field names with any characters", () => {
    assert.isTrue(keep("{Name} = 'it\\'s'", { Name: "it's" }))
    assert.isTrue(keep('{Name} = "say \\"hi\\""', { Name: 'say "hi"' }))
    assert.isTrue(keep("{Name} = 'back\\\\slash'", { Name: "back\\slash" }))
    assert.isTrue(keep("{Note's} = 'x'", { "Note's": "x" }))
  })

  it("runs the subset's functions", () => {
    assert.isTrue(keep("AND({Status} = 'Open', OR({Hours} > 5, {Done}))", { Status: "Open", Done: true }))
    assert.isTrue(keep("IF({Done}, 'yes', '') = 'yes'", { Done: true }))
    assert.isFalse(keep("IF({Done}, 'yes')", {}))
    assert.isTrue(keep("FIND('pen', LOWER({Status})) = 2", { Status: "OPEN" }))
    assert.isFalse(keep("FIND('pen', {Status})", { Status: "OPEN" }))
    assert.isTrue(keep("SEARCH('x', {Name}) = BLANK()", { Name: "abc" }))
    assert.isTrue(keep("UPPER(TRIM({Name})) = 'AB' ", { Name: "  ab " }))
    assert.isTrue(keep("LEN({Name}) = 3", { Name: "abc" }))
    assert.isTrue(keep("ARRAYJOIN({Tags}) = 'a, b'", { Tags: ["a", "b"] }))
    assert.isTrue(keep("ARRAYJOIN({Tags}, '|') = 'a|b'", { Tags: ["a", "b"] }))
    assert.isTrue(keep("RECORD_ID() = 'recBBBBBBBBBBBBBB'", {}, "recBBBBBBBBBBBBBB"))
    assert.isTrue(keep("IS_AFTER(NOW(), {Due})", { Due: "2030-06-15T11:59:59.000Z" }))
    assert.isTrue(keep("IS_SAME(TODAY(), '2030-06-15', 'day')", {}))
    assert.isTrue(keep("IS_BEFORE({Due}, DATEADD(TODAY(), 7, 'days'))", { Due: "2030-06-21" }))
    assert.isFalse(keep("IS_BEFORE({Due}, DATEADD(TODAY(), 7, 'days'))", { Due: "2030-06-22" }))
    assert.isTrue(keep("DATETIME_DIFF({Due}, '2030-06-15', 'days') = 3", { Due: "2030-06-18" }))
    assert.isTrue(keep("IS_SAME(DATETIME_PARSE('15/06/2030', 'DD/MM/YYYY'), TODAY())", {}))
    assert.isFalse(keep("IS_SAME(DATETIME_PARSE('junk'), TODAY())", {}))
  })

  it("refuses what is outside the subset, naming unknown fields and functions as the real API does", () => {
    assert.strictEqual(refusal("{Colour} = 'x'"), "Unknown field names: colour")
    assert.strictEqual(refusal("AND({A}, {B})"), "Unknown field names: a, b")
    assert.strictEqual(refusal("REGEX_MATCH({Name}, 'x')"), "Unknown function names: regex_match")
    for (const formula of [
      "",
      "{Name} =",
      "Name = 'x'",
      "{Hours} * 2",
      "{Hours} / 2",
      "NOT()",
      "IF(1)",
      "'open",
      "(1",
      "1)"
    ]) {
      assert.strictEqual(refusal(formula), "Invalid formula. Please check your formula text.", formula)
    }
  })
})
