import { assert, describe, layer } from "@effect/vitest"
import { Effect, Exit, type Layer } from "effect"
import fc from "fast-check"
import { randomUUID } from "node:crypto"
import * as Q from "../../core/tasks/Query.ts"
import { holdsExpected, RecordConflict, RecordStore, type Fields } from "../../core/tasks/RecordStore.ts"

// The suite shares one store: every test tags its records with a run id of its own and selects within it.
const freshRun = () => `run_${randomUUID()}`
const within = (run: string, query: Q.Query) => Q.and(Q.eq("run", run), query)

const statuses = ["Ready to Start", "Done", "In Progress"]
const dates = ["2026-01-01T00:00:00.000Z", "2026-06-15T12:00:00.000Z", "2026-12-31T23:59:59.000Z"]

const fieldsArb = (people: ReadonlyArray<string>): fc.Arbitrary<Record<string, unknown>> =>
  fc.record(
    {
      status: fc.constantFrom(...statuses),
      isArchived: fc.oneof(fc.boolean(), fc.constant(null)),
      assignedTo: fc.subarray([...people]),
      resolvedAt: fc.oneof(fc.constantFrom(...dates), fc.constant(null)),
      name: fc.constantFrom("Acme Widgets", "acme", "Globex", "ÉLAN ltd", "")
    },
    { requiredKeys: [] }
  )

const leafArb = (people: ReadonlyArray<string>): fc.Arbitrary<Q.Query> =>
  fc.oneof(
    fc.constant(Q.all),
    fc.constantFrom(...statuses).map((s) => Q.eq("status", s)),
    fc.boolean().map((b) => Q.eq("isArchived", b)),
    fc.constantFrom(...people).map((p) => Q.has("assignedTo", p)),
    fc.constantFrom("2026-01-01", ...dates).map((d) => Q.atLeast("resolvedAt", d)),
    fc.constantFrom("acme", "ACME", "glo", "x").map((t) => Q.contains("name", t))
  )
const queryArb = (people: ReadonlyArray<string>): fc.Arbitrary<Q.Query> =>
  fc.letrec<{ q: Q.Query }>((tie) => ({
    q: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      leafArb(people),
      tie("q").map(Q.not),
      fc.array(tie("q"), { maxLength: 3 }).map((qs) => Q.and(...qs)),
      fc.array(tie("q"), { maxLength: 3 }).map((qs) => Q.or(...qs))
    )
  })).q

/** Values a guarded field holds or is expected to hold: near misses of one another (order, nesting, null). */
const guardValues = (a: string, b: string): ReadonlyArray<Fields[string]> => [
  "To Consider",
  "Accepted",
  "",
  null,
  true,
  false,
  0,
  2.5,
  [],
  [a],
  [a, b],
  [b, a],
  { a: 1 },
  { a: 1, b: null },
  { a: [1, 2] },
  { a: [2, 1] }
]
/**
 * A store of typed fields keeps in each field only values of its type (a select's names, a link's ids); a field
 * holding JSON (`x` here) keeps any. The near misses are then those each type allows.
 */
const guardFieldsArb = (people: ReadonlyArray<string>, typed: boolean) => {
  const [a, b] = [people[0]!, people[1]!]
  if (!typed)
    return fc.dictionary(fc.constantFrom("aiStatus", "owner", "x"), fc.constantFrom(...guardValues(a, b)), {
      maxKeys: 3
    })
  return fc.record(
    {
      aiStatus: fc.constantFrom<Fields[string]>("To Consider", "Accepted", "", null),
      owner: fc.constantFrom<Fields[string]>([], [a], [a, b], [b, a], null),
      x: fc.constantFrom(...guardValues(a, b))
    },
    { requiredKeys: [] }
  )
}

export interface RecordStoreContractOptions {
  /**
   * The store keeps typed fields, as Airtable does: an empty value (`""`, `[]`, `false`, `null`) reads back
   * missing, and a link names records that exist. Stores of JSON (memory, SQL) keep every value as given.
   */
  readonly typed?: boolean | undefined
}

/**
 * The fields this suite writes beyond the task inbox's own, for a store of typed fields to hold: each record's
 * run, the order of creation, the outcomes of races, and `x`, a field holding any JSON value.
 */
export const contractFields: Readonly<
  Record<string, ReadonlyArray<{ readonly key: string; readonly type: "text" | "number" | "checkbox" | "json" }>>
> = {
  tasks: [
    { key: "run", type: "text" },
    { key: "n", type: "number" },
    { key: "attempt", type: "number" },
    { key: "created", type: "checkbox" },
    { key: "name", type: "text" },
    { key: "x", type: "json" }
  ],
  projects: [
    { key: "run", type: "text" },
    { key: "n", type: "number" }
  ],
  proposals: [
    { key: "run", type: "text" },
    { key: "winner", type: "number" },
    { key: "written", type: "checkbox" },
    { key: "x", type: "json" }
  ],
  collaborators: [{ key: "run", type: "text" }]
}

const asConflict = (error: unknown): RecordConflict => {
  assert.instanceOf(error, RecordConflict)
  return error as RecordConflict
}

/** The RecordStore port's contract (core/tasks/RecordStore.ts), run once per adapter. */
export const RecordStoreContract = (
  name: string,
  store: Layer.Layer<RecordStore, unknown>,
  options: RecordStoreContractOptions = {}
) => {
  const typed = options.typed === true
  /** The fields as the store keeps them: without empty values, for a store of typed fields. */
  const kept = (fields: Fields): Fields =>
    typed
      ? Object.fromEntries(
          Object.entries(fields).filter(
            ([, value]) =>
              value !== null && value !== "" && value !== false && !(Array.isArray(value) && value.length === 0)
          )
        )
      : fields
  /** Three people and two projects of the run, for links to name. */
  const linked = (run: string) =>
    Effect.gen(function* () {
      const records = yield* RecordStore
      const people = yield* Effect.forEach(["a", "b", "c"], (p) =>
        records.create("collaborators", { run, email: `${p}@example.com`, name: p.toUpperCase() })
      )
      const projects = yield* Effect.forEach(["P1", "P2"], (p) => records.create("projects", { run, name: p }))
      return { people: people.map((p) => p.id), projects: projects.map((p) => p.id) }
    })
  return describe(`RecordStore contract (${name})`, () =>
    layer(store, { excludeTestServices: true, timeout: "120 seconds" })((it) => {
      it.effect(
        "create issues opaque ids, usr… for collaborators and rec… for other tables, and keeps the fields",
        () =>
          Effect.gen(function* () {
            const records = yield* RecordStore
            const run = freshRun()
            const { projects } = yield* linked(run)
            const fields: Fields = {
              run,
              title: `Zoë's "quoted" ✓ task`,
              project: projects,
              hoursEstimated: 2.5,
              isArchived: false,
              x: { action: "change_status", status: "Done", nested: { list: [1, null] } }
            }
            const task = yield* records.create("tasks", fields)
            const person = yield* records.create("collaborators", { run, email: "a@example.com", name: "A" })
            assert.match(task.id, /^rec[A-Za-z0-9]{14}$/)
            assert.match(person.id, /^usr[A-Za-z0-9]{14}$/)
            assert.deepStrictEqual(task.fields, kept(fields))
            assert.isTrue(Number.isFinite(Date.parse(task.createdAt)))
            assert.deepStrictEqual(yield* records.get("tasks", task.id), task)
            const second = yield* records.create("tasks", { run })
            assert.notStrictEqual(second.id, task.id)
          })
      )

      it.effect("createUnread answers the record as it is stored, as create does", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const run = freshRun()
          const { projects } = yield* linked(run)
          const fields: Fields = {
            run,
            title: `Zoë's "quoted" ✓ task`,
            project: [projects[0]!],
            hoursEstimated: 2.5,
            x: { action: "change_status", nested: { list: [1, null] } }
          }
          const task = yield* records.createUnread("tasks", fields)
          assert.match(task.id, /^rec[A-Za-z0-9]{14}$/)
          assert.deepStrictEqual(task.fields, kept(fields))
          assert.deepStrictEqual(yield* records.get("tasks", task.id), task)
        })
      )

      it.effect("get answers undefined for an unknown id and for an id of another table", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const task = yield* records.create("tasks", { run: freshRun() })
          assert.isUndefined(yield* records.get("tasks", "recDoesNotExist00"))
          assert.isUndefined(yield* records.get("projects", task.id))
        })
      )

      it.effect("update replaces the fields given, keeps the others, and null empties a field", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const run = freshRun()
          const task = yield* records.create("tasks", {
            run,
            title: "Old",
            description: "Keep me",
            dueDate: "2026-01-02"
          })
          const { projects } = yield* linked(run)
          const updated = yield* records.update("tasks", task.id, {
            title: "New",
            dueDate: null,
            project: [projects[0]!]
          })
          assert.deepStrictEqual(
            updated?.fields,
            kept({ run, title: "New", description: "Keep me", dueDate: null, project: [projects[0]!] })
          )
          assert.strictEqual(updated?.createdAt, task.createdAt)
          assert.deepStrictEqual(yield* records.get("tasks", task.id), updated)
          assert.isUndefined(yield* records.update("tasks", "recDoesNotExist00", { title: "x" }))
          assert.isUndefined(yield* records.update("projects", task.id, { name: "x" }))
        })
      )

      it.effect("updateIf writes while every expected value holds; otherwise RecordConflict, nothing written", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const run = freshRun()
          const { people } = yield* linked(run)
          const owner = [people[0]!]
          const proposal = yield* records.create("proposals", { run, aiStatus: "To Consider", owner })
          const accepted = yield* records.updateIf({
            table: "proposals",
            id: proposal.id,
            expected: { aiStatus: "To Consider", owner },
            fields: { aiStatus: "Accepted", resolvedAt: "2026-01-01T00:00:00.000Z" }
          })
          assert.deepStrictEqual(accepted?.fields, {
            run,
            aiStatus: "Accepted",
            owner,
            resolvedAt: "2026-01-01T00:00:00.000Z"
          })
          const conflict = asConflict(
            yield* Effect.flip(
              records.updateIf({
                table: "proposals",
                id: proposal.id,
                expected: { aiStatus: "To Consider" },
                fields: { aiStatus: "Rejected" }
              })
            )
          )
          assert.strictEqual(conflict._tag, "RecordConflict")
          assert.deepInclude(conflict, { table: "proposals", id: proposal.id })
          assert.deepStrictEqual(conflict.fields, accepted?.fields)
          assert.deepStrictEqual(yield* records.get("proposals", proposal.id), accepted)
          // A missing record is not a conflict: there is nothing to write.
          const missing = { expected: { aiStatus: "To Consider" }, fields: { aiStatus: "Accepted" } }
          assert.isUndefined(yield* records.updateIf({ table: "proposals", id: "recDoesNotExist00", ...missing }))
          assert.isUndefined(yield* records.updateIf({ table: "tasks", id: proposal.id, ...missing }))
        })
      )

      it.effect("updateIf compares as JSON: arrays in order, objects by member, a missing field holds null", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const run = freshRun()
          const { people } = yield* linked(run)
          const fields = guardFieldsArb(people, typed) as fc.Arbitrary<Fields>
          const cases = fc.sample(fc.tuple(fields, fields), { numRuns: 80, seed: 5 })
          for (const [stored, expected] of cases) {
            const record = yield* records.create("proposals", { ...stored, run })
            const outcome = yield* Effect.exit(
              records.updateIf({ table: "proposals", id: record.id, expected, fields: { written: true } })
            )
            const holds = holdsExpected(record.fields, expected)
            assert.strictEqual(Exit.isSuccess(outcome), holds, JSON.stringify({ stored, expected }))
            const after = yield* records.get("proposals", record.id)
            assert.strictEqual(after?.fields["written"] === true, holds)
          }
        })
      )

      it.effect("of updateIfs racing with one expectation, exactly one writes", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const proposal = yield* records.create("proposals", { run: freshRun(), aiStatus: "To Consider" })
          const outcomes = yield* Effect.forEach(
            Array.from({ length: 8 }, (_, i) => i),
            (i) =>
              Effect.exit(
                records.updateIf({
                  table: "proposals",
                  id: proposal.id,
                  expected: { aiStatus: "To Consider" },
                  fields: { aiStatus: i % 2 === 0 ? "Accepted" : "Rejected", winner: i }
                })
              ),
            { concurrency: "unbounded" }
          )
          const winners = outcomes.flatMap((exit, i) => (Exit.isSuccess(exit) ? [i] : []))
          assert.lengthOf(winners, 1)
          for (const exit of outcomes) {
            if (Exit.isFailure(exit)) assert.include(JSON.stringify(exit.cause), "RecordConflict")
          }
          const stored = yield* records.get("proposals", proposal.id)
          assert.strictEqual(stored?.fields["winner"], winners[0])
          assert.strictEqual(stored?.fields["aiStatus"], winners[0]! % 2 === 0 ? "Accepted" : "Rejected")
        })
      )

      it.effect("updateIfAndWrite makes the guarded update and creates the record linked back to it", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const run = freshRun()
          const proposal = yield* records.create("proposals", { run, aiStatus: "To Consider" })
          const both = yield* records.updateIfAndWrite(
            {
              table: "proposals",
              id: proposal.id,
              expected: { aiStatus: "To Consider" },
              fields: { aiStatus: "Accepted" }
            },
            { _tag: "Create", table: "tasks", fields: { run, title: "From the proposal" }, linkedBy: "proposal" }
          )
          assert.deepStrictEqual(both?.updated, yield* records.get("proposals", proposal.id))
          assert.strictEqual(both?.updated.fields["aiStatus"], "Accepted")
          assert.match(both!.written.id, /^rec/)
          assert.deepStrictEqual(both?.written.fields, { run, title: "From the proposal", proposal: [proposal.id] })
          assert.deepStrictEqual(
            (yield* records.select("tasks", Q.has("proposal", proposal.id))).map((r) => r.id),
            [both!.written.id]
          )
        })
      )

      it.effect("updateIfAndWrite updates the other record with the guarded one", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const run = freshRun()
          const task = yield* records.create("tasks", { run, status: "Ready to Start", title: "T" })
          const proposal = yield* records.create("proposals", { run, aiStatus: "To Consider", task: [task.id] })
          const both = yield* records.updateIfAndWrite(
            {
              table: "proposals",
              id: proposal.id,
              expected: { aiStatus: "To Consider" },
              fields: { aiStatus: "Accepted" }
            },
            { _tag: "Update", table: "tasks", id: task.id, fields: { status: "Done" } }
          )
          assert.deepStrictEqual(both?.written.fields, { run, status: "Done", title: "T" })
          assert.deepStrictEqual(yield* records.get("tasks", task.id), both?.written)
          assert.strictEqual((yield* records.get("proposals", proposal.id))?.fields["aiStatus"], "Accepted")
        })
      )

      it.effect("updateIfAndWrite writes neither on a conflict, nor when a record it names is missing", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const run = freshRun()
          const task = yield* records.create("tasks", { run, status: "Ready to Start" })
          const resolved = yield* records.create("proposals", { run, aiStatus: "Rejected" })
          const open = yield* records.create("proposals", { run, aiStatus: "To Consider" })
          const accept = (id: string) => ({
            table: "proposals" as const,
            id,
            expected: { aiStatus: "To Consider" },
            fields: { aiStatus: "Accepted" }
          })
          const create = {
            _tag: "Create" as const,
            table: "tasks" as const,
            fields: { run, created: true },
            linkedBy: "proposal"
          }
          const change = { _tag: "Update" as const, table: "tasks" as const, id: task.id, fields: { status: "Done" } }
          const conflictCreate = asConflict(yield* Effect.flip(records.updateIfAndWrite(accept(resolved.id), create)))
          assert.strictEqual(conflictCreate._tag, "RecordConflict")
          assert.strictEqual(conflictCreate.fields["aiStatus"], "Rejected")
          const conflictChange = yield* Effect.flip(records.updateIfAndWrite(accept(resolved.id), change))
          assert.strictEqual(conflictChange._tag, "RecordConflict")
          assert.isUndefined(yield* records.updateIfAndWrite(accept("recDoesNotExist00"), create))
          assert.isUndefined(yield* records.updateIfAndWrite(accept(open.id), { ...change, id: "recDoesNotExist00" }))
          assert.deepStrictEqual(yield* records.select("tasks", Q.and(Q.eq("run", run), Q.eq("created", true))), [])
          assert.strictEqual((yield* records.get("tasks", task.id))?.fields["status"], "Ready to Start")
          assert.strictEqual((yield* records.get("proposals", open.id))?.fields["aiStatus"], "To Consider")
          assert.strictEqual((yield* records.get("proposals", resolved.id))?.fields["aiStatus"], "Rejected")
        })
      )

      it.effect("of updateIfAndWrites racing on one record, one commits both writes: one record is created", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const run = freshRun()
          const proposal = yield* records.create("proposals", { run, aiStatus: "To Consider" })
          const outcomes = yield* Effect.forEach(
            Array.from({ length: 8 }, (_, i) => i),
            (i) =>
              Effect.exit(
                records.updateIfAndWrite(
                  {
                    table: "proposals",
                    id: proposal.id,
                    expected: { aiStatus: "To Consider" },
                    fields: { aiStatus: "Accepted", winner: i }
                  },
                  { _tag: "Create", table: "tasks", fields: { run, attempt: i }, linkedBy: "proposal" }
                )
              ),
            { concurrency: "unbounded" }
          )
          const winners = outcomes.flatMap((exit, i) => (Exit.isSuccess(exit) ? [i] : []))
          assert.lengthOf(winners, 1)
          const created = yield* records.select("tasks", Q.has("proposal", proposal.id))
          assert.deepStrictEqual(
            created.map((r) => r.fields["attempt"]),
            winners
          )
          assert.strictEqual((yield* records.get("proposals", proposal.id))?.fields["winner"], winners[0])
        })
      )

      it.effect("select answers newest first, within one table, at most `limit` records", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const run = freshRun()
          const first = yield* records.create("tasks", { run, n: 1 })
          const second = yield* records.create("tasks", { run, n: 2 })
          const third = yield* records.create("tasks", { run, n: 3 })
          yield* records.create("projects", { run, n: 4 })
          const all = yield* records.select("tasks", Q.eq("run", run))
          assert.deepStrictEqual(
            all.map((r) => r.id),
            [third.id, second.id, first.id]
          )
          const two = yield* records.select("tasks", Q.eq("run", run), { limit: 2 })
          assert.deepStrictEqual(
            two.map((r) => r.id),
            [third.id, second.id]
          )
        })
      )

      it.effect("a missing or null field matches no Eq, Has, AtLeast or Contains, and every Not of them", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const run = freshRun()
          const empty = yield* records.create("tasks", { run, status: null })
          const ids = (query: Q.Query) =>
            Effect.map(records.select("tasks", within(run, query)), (rs) => rs.map((r) => r.id))
          for (const query of [
            Q.eq("status", "Done"),
            Q.eq("isArchived", false),
            Q.has("project", "recP"),
            Q.atLeast("resolvedAt", ""),
            Q.contains("title", "")
          ]) {
            assert.deepStrictEqual(yield* ids(query), [], JSON.stringify(query))
            assert.deepStrictEqual(yield* ids(Q.not(query)), [empty.id], JSON.stringify(query))
          }
          assert.deepStrictEqual(yield* ids(Q.or()), [])
          assert.deepStrictEqual(yield* ids(Q.and()), [empty.id])
        })
      )

      it.effect("Eq on a link field does not match one of its ids; Has does", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const run = freshRun()
          const { people } = yield* linked(run)
          const task = yield* records.create("tasks", { run, assignedTo: [people[0]!, people[1]!] })
          assert.deepStrictEqual(yield* records.select("tasks", within(run, Q.eq("assignedTo", people[0]!))), [])
          assert.deepStrictEqual(
            (yield* records.select("tasks", within(run, Q.has("assignedTo", people[1]!)))).map((r) => r.id),
            [task.id]
          )
        })
      )

      it.effect("select holds exactly the records the query matches (core/tasks/Query.ts), for random queries", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const run = freshRun()
          const { people } = yield* linked(run)
          const stored = yield* Effect.forEach(fc.sample(fieldsArb(people), { numRuns: 40, seed: 7 }), (fields) =>
            records.create("tasks", { ...(fields as Fields), run })
          )
          for (const query of fc.sample(queryArb(people), { numRuns: 60, seed: 11 })) {
            const expected = [...stored]
              .reverse()
              .filter((r) => Q.matches(query)(r.fields))
              .map((r) => r.id)
            const actual = (yield* records.select("tasks", within(run, query))).map((r) => r.id)
            assert.deepStrictEqual(actual, expected, JSON.stringify(query))
          }
        })
      )
    }))
}
