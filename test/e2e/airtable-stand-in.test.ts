import { assert, describe, it, vi } from "@effect/vitest"
import Airtable from "airtable"
import { Effect } from "effect"
import { type AirtableStandIn, type StandInOptions, startAirtableStandIn } from "../fakes/AirtableStandIn.ts"

/**
 * The stand-in driven by Airtable's official client (airtable.js): what the client sends, the stand-in
 * understands, and what the stand-in answers, the client reads as it reads the real API's answers.
 */

const baseId = "appStandInTest001"
const token = "patStandIn.0123456789abcdef"

const tasksTable = {
  name: "Tasks",
  fields: [
    "Name",
    { name: "Status", type: "singleSelect", options: { choices: [{ name: "Open" }, { name: "Done" }] } },
    { name: "Hours", type: "number", options: { precision: 1 } },
    { name: "Urgent", type: "checkbox", options: { icon: "check", color: "greenBright" } },
    { name: "Due", type: "date", options: { dateFormat: { name: "iso" } } },
    "Notes"
  ]
}

/** The official client does not pace itself: the rate limit is off but where a test is about it. */
const unlimited = { rateLimit: { perSecond: Number.POSITIVE_INFINITY } }

const withStandIn = <A, E>(
  use: (standIn: AirtableStandIn) => Effect.Effect<A, E>,
  options: Partial<StandInOptions> = {}
) =>
  Effect.acquireUseRelease(
    Effect.promise(() =>
      startAirtableStandIn({ tokens: [token], bases: { [baseId]: { Tasks: tasksTable } }, ...unlimited, ...options })
    ),
    use,
    (standIn) => Effect.promise(() => standIn.close())
  )

const clientOf = (standIn: AirtableStandIn, options: { apiKey?: string; noRetryIfRateLimited?: boolean } = {}) =>
  new Airtable({ apiKey: token, endpointUrl: standIn.url, ...options }).base(baseId)

/** A request sent by hand (the official client has no metadata API), with the stand-in's token. */
const send = (standIn: AirtableStandIn, method: string, path: string, body?: unknown) =>
  Effect.promise(() =>
    fetch(`${standIn.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))
  )

const call = <A>(f: () => Promise<A>) => Effect.promise(f)

/** The client's error for a call that fails: an AirtableError with `error`, `message` and `statusCode`. */
const failure = (f: () => Promise<unknown>) =>
  Effect.promise(() =>
    f().then(
      () => assert.fail("the call succeeded"),
      (error: { error: string; message: string; statusCode: number }) => ({
        error: error.error,
        message: error.message,
        statusCode: error.statusCode
      })
    )
  )

const taskFields = (i: number) => ({
  Name: `Task ${String(i).padStart(2, "0")}`,
  Status: i % 3 === 0 ? "Done" : "Open",
  Hours: i % 7,
  ...(i % 2 === 0 ? { Urgent: true } : {}),
  Due: `2030-01-${String(i).padStart(2, "0")}`
})

/** Creates tasks 1..n through the client, ten a request. */
const seedTasks = (standIn: AirtableStandIn, n: number) =>
  Effect.gen(function* () {
    const tasks = clientOf(standIn)("Tasks")
    for (let from = 1; from <= n; from += 10) {
      const batch = Array.from({ length: Math.min(10, n - from + 1) }, (_, i) => ({ fields: taskFields(from + i) }))
      yield* call(() => tasks.create(batch))
    }
  })

describe("the Airtable stand-in, driven by the official airtable.js client", () => {
  it.live("select with a formula, a sort, fields and a page size pages with eachPage and all", () =>
    withStandIn((standIn) =>
      Effect.gen(function* () {
        yield* seedTasks(standIn, 25)
        const tasks = clientOf(standIn)("Tasks")
        const params = {
          filterByFormula: "AND({Status} = 'Open', {Hours} >= 2, NOT({Urgent}))",
          sort: [
            { field: "Hours", direction: "desc" as const },
            { field: "Name", direction: "asc" as const }
          ],
          fields: ["Name", "Hours"],
          pageSize: 3
        }
        const expected = Array.from({ length: 25 }, (_, i) => taskFields(i + 1))
          .filter((t) => t.Status === "Open" && t.Hours >= 2 && t.Urgent !== true)
          .sort((a, b) => b.Hours - a.Hours || a.Name.localeCompare(b.Name))
          .map((t) => ({ Name: t.Name, Hours: t.Hours }))
        assert.isAbove(expected.length, 6)

        const pages: Array<Array<unknown>> = []
        standIn.requests.length = 0
        yield* call(() =>
          tasks.select(params).eachPage((records, next) => {
            pages.push(records.map((r) => r.fields))
            next()
          })
        )
        assert.deepStrictEqual(pages.flat(), expected)
        assert.deepStrictEqual(
          pages.map((p) => p.length),
          Array.from({ length: Math.ceil(expected.length / 3) }, (_, i) => Math.min(3, expected.length - i * 3))
        )
        // The first request has no offset; each next one carries the offset the previous answer gave.
        assert.strictEqual(standIn.requests.length, pages.length)
        assert.notInclude(standIn.requests[0]!.query, "offset")
        assert.match(standIn.requests[1]!.query, /offset=itr[A-Za-z0-9]{14}%2Frec[A-Za-z0-9]{14}/)
        assert.include(standIn.requests[0]!.query, "fields%5B%5D=Name")
        assert.include(standIn.requests[0]!.query, "sort%5B0%5D%5Bfield%5D=Hours")

        const all = yield* call(() => tasks.select(params).all())
        assert.deepStrictEqual(
          all.map((r) => r.fields),
          expected
        )
        const everything = yield* call(() => tasks.select().all())
        assert.strictEqual(everything.length, 25)
        assert.deepStrictEqual(
          everything.map((r) => r.get("Name")),
          expected.length === 0 ? [] : Array.from({ length: 25 }, (_, i) => taskFields(i + 1).Name)
        )
        // Empty values are left out of answers: a task not urgent has no Urgent field at all.
        assert.notProperty(everything[0]!.fields, "Urgent")
        assert.strictEqual(everything[1]!.fields.Urgent, true)

        // A long formula goes as POST .../listRecords with the parameters in the body; the answer is the same.
        const long = yield* call(() =>
          tasks
            .select({ ...params, filterByFormula: `AND(${params.filterByFormula}, ${"TRUE(), ".repeat(2000)}TRUE())` })
            .all()
        )
        assert.deepStrictEqual(
          long.map((r) => r.fields),
          expected
        )
        assert.isTrue(standIn.requests.some((r) => r.method === "POST" && r.path.endsWith("/Tasks/listRecords")))

        const found = yield* call(() =>
          tasks.select({ filterByFormula: "FIND('task 1', LOWER({Name}))", maxRecords: 4 }).all()
        )
        assert.deepStrictEqual(
          found.map((r) => r.get("Name")),
          ["Task 10", "Task 11", "Task 12", "Task 13"]
        )
        const dated = yield* call(() =>
          tasks.select({ filterByFormula: "IS_BEFORE({Due}, DATEADD('2030-01-01', 3, 'days'))" }).all()
        )
        assert.deepStrictEqual(
          dated.map((r) => r.get("Name")),
          ["Task 01", "Task 02", "Task 03"]
        )
      })
    )
  )

  it.live("find answers a record, and a missing one as the client's NOT_FOUND with status 404", () =>
    withStandIn((standIn) =>
      Effect.gen(function* () {
        const tasks = clientOf(standIn)("Tasks")
        const created = yield* call(() => tasks.create({ Name: "One", Hours: 1.5 }))
        const found = yield* call(() => tasks.find(created.id))
        assert.match(found.id, /^rec[A-Za-z0-9]{14}$/)
        assert.deepStrictEqual(found.fields, { Name: "One", Hours: 1.5 })
        assert.isFalse(Number.isNaN(Date.parse(found._rawJson.createdTime)))
        const missing = yield* failure(() => tasks.find("recAAAAAAAAAAAAAA"))
        assert.deepStrictEqual(missing, { error: "NOT_FOUND", message: "Record not found", statusCode: 404 })
      })
    )
  )

  it.live("creates, updates (PATCH and PUT) and destroys at most 10 records a request, all or nothing", () =>
    withStandIn((standIn) =>
      Effect.gen(function* () {
        const tasks = clientOf(standIn)("Tasks")
        const ten = yield* call(() =>
          tasks.create(Array.from({ length: 10 }, (_, i) => ({ fields: taskFields(i + 1) })))
        )
        assert.strictEqual(ten.length, 10)
        const eleven = Array.from({ length: 11 }, (_, i) => ({ fields: taskFields(i + 1) }))
        const tooMany = yield* failure(() => tasks.create(eleven))
        assert.strictEqual(tooMany.statusCode, 422)
        assert.strictEqual(tooMany.error, "INVALID_RECORDS")
        assert.include(tooMany.message, "You must provide an array of up to 10 record objects")
        assert.strictEqual(standIn.table(baseId, "Tasks").records.size, 10)

        const patched = yield* call(() =>
          tasks.update(ten.slice(0, 2).map((r) => ({ id: r.id, fields: { Notes: "checked", Status: "Done" } })))
        )
        assert.deepStrictEqual(patched[0]!.fields, { ...taskFields(1), Notes: "checked", Status: "Done" })
        const replaced = yield* call(() => tasks.replace([{ id: ten[2]!.id, fields: { Name: "Only a name" } }]))
        assert.deepStrictEqual(replaced[0]!.fields, { Name: "Only a name" })
        const single = yield* call(() => tasks.update(ten[3]!.id, { Hours: null as unknown as number }))
        assert.notProperty(single.fields, "Hours")
        const tooManyUpdates = yield* failure(() =>
          tasks.update([...ten, ten[0]!].map((r) => ({ id: r.id, fields: { Notes: "x" } })))
        )
        assert.strictEqual(tooManyUpdates.error, "INVALID_RECORDS")
        assert.include(tooManyUpdates.message, 'each with an "id" ID field')

        // One bad record refuses the whole batch.
        const unknown = yield* failure(() =>
          tasks.update([
            { id: ten[4]!.id, fields: { Notes: "kept?" } },
            { id: ten[5]!.id, fields: { Colour: "red" } }
          ])
        )
        assert.deepStrictEqual(unknown, {
          error: "UNKNOWN_FIELD_NAME",
          message: 'Unknown field name: "Colour"',
          statusCode: 422
        })
        assert.notProperty(standIn.table(baseId, "Tasks").records.get(ten[4]!.id)!.fields, "Notes")

        const option = yield* failure(() => tasks.create([{ fields: { Name: "New", Status: "Blocked" } }]))
        assert.strictEqual(option.error, "INVALID_MULTIPLE_CHOICE_OPTIONS")
        assert.strictEqual(option.statusCode, 422)
        const wrongType = yield* failure(() =>
          tasks.create([{ fields: { Name: "New", Hours: "three" as unknown as number } }])
        )
        assert.strictEqual(wrongType.error, "INVALID_VALUE_FOR_COLUMN")
        const typecast = yield* call(() =>
          tasks.create([{ fields: { Name: "New", Status: "Blocked", Hours: "3" as unknown as number } }], {
            typecast: true
          })
        )
        assert.deepStrictEqual(typecast[0]!.fields, { Name: "New", Status: "Blocked", Hours: 3 })
        const statusField = standIn.table(baseId, "Tasks").fields.find((f) => f.name === "Status")!
        assert.deepStrictEqual(
          (statusField.options!.choices as Array<{ name: string }>).map((c) => c.name),
          ["Open", "Done", "Blocked"]
        )

        const destroyed = yield* call(() => tasks.destroy(ten.slice(0, 3).map((r) => r.id)))
        assert.deepStrictEqual(
          destroyed.map((r) => r.id),
          ten.slice(0, 3).map((r) => r.id)
        )
        const one = yield* call(() => tasks.destroy(ten[3]!.id))
        assert.strictEqual(one.id, ten[3]!.id)
        const tooManyDeletes = yield* failure(() => tasks.destroy(Array.from({ length: 11 }, () => ten[4]!.id)))
        assert.strictEqual(tooManyDeletes.statusCode, 422)
        const gone = yield* failure(() => tasks.destroy([ten[0]!.id]))
        assert.strictEqual(gone.statusCode, 404)
        assert.strictEqual(standIn.table(baseId, "Tasks").records.size, 7)
      })
    )
  )

  it.live("refusals surface as the client's errors with the real API's status and error strings", () =>
    withStandIn((standIn) =>
      Effect.gen(function* () {
        const tasks = clientOf(standIn)("Tasks")
        const select = (params: Record<string, unknown>) => () => tasks.select(params).all()

        assert.deepStrictEqual(
          yield* failure(() => clientOf(standIn, { apiKey: "patWrong" })("Tasks").select().all()),
          {
            error: "AUTHENTICATION_REQUIRED",
            message: "You should provide valid api key to perform this operation",
            statusCode: 401
          }
        )
        const table = yield* failure(() => clientOf(standIn)("Nope").select().all())
        assert.deepStrictEqual([table.error, table.statusCode], ["NOT_AUTHORIZED", 403])
        const base = yield* failure(() =>
          new Airtable({ apiKey: token, endpointUrl: standIn.url }).base("appUnknownBase001")("Tasks").select().all()
        )
        assert.strictEqual(base.statusCode, 403)

        for (const [formula, message] of [
          ["{Status} = ", "Invalid formula. Please check your formula text."],
          ["{Colour} = 'red'", "Unknown field names: colour"],
          ["REGEX_MATCH({Name}, 'x')", "Unknown function names: regex_match"],
          ["Status = 'Open'", "Invalid formula. Please check your formula text."],
          ["{Hours} * 2", "Invalid formula. Please check your formula text."],
          ["IF({Urgent})", "Invalid formula. Please check your formula text."]
        ] as const) {
          assert.deepStrictEqual(yield* failure(select({ filterByFormula: formula })), {
            error: "INVALID_FILTER_BY_FORMULA",
            message: `The formula for filtering records is invalid: ${message}`,
            statusCode: 422
          })
        }
        const page = yield* failure(select({ pageSize: 101 }))
        assert.deepStrictEqual([page.error, page.statusCode], ["INVALID_REQUEST_UNKNOWN", 422])
        const sort = yield* failure(select({ sort: [{ field: "Colour" }] }))
        assert.deepStrictEqual([sort.error, sort.statusCode], ["UNKNOWN_FIELD_NAME", 422])
        const fields = yield* failure(select({ fields: ["Colour"] }))
        assert.deepStrictEqual([fields.error, fields.statusCode], ["UNKNOWN_FIELD_NAME", 422])
        // The client checks `offset` itself; sent by hand, a bad one is refused as the real API refuses it.
        const get = (query: string) => send(standIn, "GET", `/v0/${baseId}/Tasks?${query}`)
        const offset = yield* get("offset=nonsense")
        assert.deepStrictEqual([offset.status, offset.body.error.type], [422, "INVALID_OFFSET_VALUE"])
        const expired = yield* get("offset=itrAAAAAAAAAAAAAA%2FrecAAAAAAAAAAAAAA")
        assert.deepStrictEqual([expired.status, expired.body.error.type], [422, "LIST_RECORDS_ITERATOR_NOT_AVAILABLE"])
        assert.deepStrictEqual(yield* get("pageSize=5").pipe(Effect.map((a) => a.status)), 200)
        const path = yield* send(standIn, "GET", `/v0/${baseId}/Tasks/recAAAAAAAAAAAAAA/more`)
        assert.deepStrictEqual(path, { status: 404, body: { error: "NOT_FOUND" } })

        standIn.failNext.push({ status: 503 })
        assert.deepStrictEqual(yield* failure(select({})), {
          error: "SERVICE_UNAVAILABLE",
          message: "The service is temporarily unavailable. Please retry shortly.",
          statusCode: 503
        })

        // No answer at all, and an answer too slow for the client's timeout: failures without a status.
        standIn.failNext.push({ status: 0 })
        const dropped = yield* failure(select({}))
        assert.isUndefined(dropped.statusCode)
        standIn.failNext.push({ status: 200, delayMs: 2_000 })
        const slow = new Airtable({ apiKey: token, endpointUrl: standIn.url, requestTimeout: 100 }).base(baseId)
        const timedOut = yield* failure(() => slow("Tasks").select().all())
        assert.isUndefined(timedOut.statusCode)
        assert.match(timedOut.message, /abort/i)
        // A delayed request is otherwise served as usual.
        standIn.failNext.push({ status: 200, delayMs: 50 })
        assert.deepStrictEqual(
          yield* call(() =>
            tasks
              .select()
              .all()
              .then((records) => records.length)
          ),
          0
        )
      })
    )
  )

  it.live("a sixth request to a base within a second is 429 RATE_LIMIT_REACHED, which the client retries", () =>
    withStandIn(
      (standIn) =>
        Effect.gen(function* () {
          yield* seedTasks(standIn, 1)
          const [record] = yield* call(() => clientOf(standIn)("Tasks").select().all())
          // The seeding's request is more than a second away before the burst starts.
          yield* Effect.sleep("1100 millis")
          standIn.requests.length = 0

          const strict = clientOf(standIn, { noRetryIfRateLimited: true })("Tasks")
          const answers = yield* call(() =>
            Promise.allSettled(Array.from({ length: 6 }, () => strict.find(record!.id)))
          )
          assert.strictEqual(answers.filter((a) => a.status === "fulfilled").length, 5)
          const refused = answers.find((a) => a.status === "rejected") as PromiseRejectedResult
          assert.deepStrictEqual([refused.reason.error, refused.reason.statusCode], ["TOO_MANY_REQUESTS", 429])
          assert.deepStrictEqual(standIn.requests.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 429])

          // The body is the real API's; the client (which retries by itself) waits and then succeeds.
          const raw = yield* send(standIn, "GET", `/v0/${baseId}/Tasks`)
          assert.deepStrictEqual(raw, {
            status: 429,
            body: { error: { type: "RATE_LIMIT_REACHED", message: "Rate limit exceeded. Please try again later" } }
          })
          // The client's backoff is random() * 5 s on the first retry: fixed here past the stand-in's penalty.
          const random = vi.spyOn(Math, "random").mockReturnValue(0.3)
          const retried = yield* call(() => clientOf(standIn)("Tasks").find(record!.id)).pipe(
            Effect.ensuring(Effect.sync(() => random.mockRestore()))
          )
          assert.strictEqual(retried.id, record!.id)
          assert.deepStrictEqual(
            standIn.requests.slice(-2).map((r) => r.status),
            [429, 200]
          )
        }),
      { rateLimit: { perSecond: 5, penaltyMs: 1_000 } }
    )
  )

  it.live("a base past its limit answers 429 for the next 30 seconds, then serves again", () => {
    let clock = Date.parse("2030-01-01T00:00:00Z")
    return withStandIn(
      (standIn) =>
        Effect.gen(function* () {
          const status = Effect.map(send(standIn, "GET", `/v0/${baseId}/Tasks?pageSize=1`), (a) => a.status)
          for (let i = 0; i < 5; i++) assert.strictEqual(yield* status, 200)
          assert.strictEqual(yield* status, 429)
          clock += 999
          assert.strictEqual(yield* status, 429)
          clock += 29_000
          assert.strictEqual(yield* status, 429)
          clock += 1
          assert.strictEqual(yield* status, 200)
          // Another base has limits of its own.
          assert.strictEqual((yield* send(standIn, "GET", "/v0/meta/bases/appOtherBase00001/tables")).status, 200)
          assert.strictEqual(standIn.busiestSecond(baseId), 7)
          assert.strictEqual(standIn.busiestSecond("appOtherBase00001"), 1)
          assert.deepStrictEqual(
            standIn.requests.map((r) => r.at - standIn.requests[0]!.at),
            [0, 0, 0, 0, 0, 0, 999, 29_999, 30_000, 30_000]
          )
        }),
      {
        bases: { [baseId]: { Tasks: tasksTable }, appOtherBase00001: {} },
        rateLimit: { perSecond: 5 },
        now: () => clock
      }
    )
  })

  it.live("the metadata API lists tables with their fields, and creates tables and fields as it checks them", () =>
    withStandIn((standIn) =>
      Effect.gen(function* () {
        const tables = `/v0/meta/bases/${baseId}/tables`
        const listed = yield* send(standIn, "GET", tables)
        assert.strictEqual(listed.status, 200)
        const [tasks] = listed.body.tables
        assert.strictEqual(tasks.name, "Tasks")
        assert.strictEqual(tasks.primaryFieldId, tasks.fields[0].id)
        assert.deepStrictEqual(tasks.fields[0], { id: tasks.fields[0].id, name: "Name", type: "singleLineText" })
        assert.deepStrictEqual(
          tasks.fields.map((f: { name: string; type: string }) => [f.name, f.type]),
          [
            ["Name", "singleLineText"],
            ["Status", "singleSelect"],
            ["Hours", "number"],
            ["Urgent", "checkbox"],
            ["Due", "date"],
            ["Notes", "singleLineText"]
          ]
        )
        assert.deepStrictEqual(
          tasks.fields[1].options.choices.map((c: { name: string }) => c.name),
          ["Open", "Done"]
        )
        assert.match(tasks.fields[1].options.choices[0].id, /^sel[A-Za-z0-9]{14}$/)

        const refused = (body: unknown, path = tables) =>
          Effect.map(send(standIn, "POST", path, body), (a) => [a.status, a.body.error?.type])
        assert.deepStrictEqual(yield* refused({ name: "tasks", fields: [{ name: "Name", type: "singleLineText" }] }), [
          422,
          "DUPLICATE_TABLE_NAME"
        ])
        assert.deepStrictEqual(yield* refused({ name: "Projects", fields: [] }), [422, "INVALID_REQUEST_UNKNOWN"])
        assert.deepStrictEqual(
          yield* refused({
            name: "Projects",
            fields: [{ name: "Done", type: "checkbox", options: { icon: "check", color: "greenBright" } }]
          }),
          [422, "INVALID_REQUEST_UNKNOWN"]
        )
        for (const [field, type] of [
          [{ name: "Done", type: "checkbox" }, "INVALID_FIELD_TYPE_OPTIONS_FOR_CREATE"],
          [{ name: "Note", type: "singleLineText", options: {} }, "INVALID_FIELD_TYPE_OPTIONS_FOR_CREATE"],
          [{ name: "Size", type: "number", options: { precision: 9 } }, "INVALID_FIELD_TYPE_OPTIONS_FOR_CREATE"],
          [{ name: "Tag", type: "singleSelect", options: {} }, "INVALID_FIELD_TYPE_OPTIONS_FOR_CREATE"],
          [
            { name: "Starts", type: "dateTime", options: { dateFormat: { name: "iso" } } },
            "INVALID_FIELD_TYPE_OPTIONS_FOR_CREATE"
          ],
          [{ name: "Total", type: "formula", options: { formula: "1" } }, "UNSUPPORTED_FIELD_TYPE_FOR_CREATE"],
          [{ name: "Made", type: "createdTime" }, "UNSUPPORTED_FIELD_TYPE_FOR_CREATE"],
          [
            { name: "Link", type: "multipleRecordLinks", options: { linkedTableId: "tblAAAAAAAAAAAAAA" } },
            "INVALID_FIELD_TYPE_OPTIONS_FOR_CREATE"
          ],
          [{ name: "name", type: "singleLineText" }, "DUPLICATE_OR_EMPTY_FIELD_NAME"],
          [{ name: " ", type: "singleLineText" }, "DUPLICATE_OR_EMPTY_FIELD_NAME"]
        ] as const) {
          assert.deepStrictEqual(
            yield* refused(field, `${tables}/${tasks.id}/fields`),
            [422, type],
            JSON.stringify(field)
          )
        }
        assert.deepStrictEqual(
          yield* refused({ name: "X", type: "singleLineText" }, `${tables}/tblAAAAAAAAAAAAAA/fields`),
          [403, "INVALID_PERMISSIONS_OR_MODEL_NOT_FOUND"]
        )
        assert.strictEqual((yield* send(standIn, "GET", `/v0/meta/bases/appUnknownBase001/tables`)).status, 403)

        const projects = yield* send(standIn, "POST", tables, {
          name: "Projects",
          description: "What tasks belong to",
          fields: [
            { name: "Name", type: "singleLineText" },
            { name: "Active", type: "checkbox", options: { icon: "check", color: "greenBright" } }
          ]
        })
        assert.strictEqual(projects.status, 200, JSON.stringify(projects.body))
        assert.match(projects.body.id, /^tbl[A-Za-z0-9]{14}$/)
        assert.deepStrictEqual(
          projects.body.views.map((v: { name: string }) => v.name),
          ["Grid view"]
        )
        const link = yield* send(standIn, "POST", `${tables}/${tasks.id}/fields`, {
          name: "Project",
          type: "multipleRecordLinks",
          options: { linkedTableId: projects.body.id }
        })
        assert.strictEqual(link.status, 200, JSON.stringify(link.body))
        const after = (yield* send(standIn, "GET", tables)).body.tables
        const inverse = after[1].fields.find((f: { id: string }) => f.id === link.body.options.inverseLinkFieldId)
        assert.deepStrictEqual(
          [inverse.name, inverse.type, inverse.options.linkedTableId],
          ["Tasks", "multipleRecordLinks", tasks.id]
        )

        // A link written on one side is listed on the other; formulas see the linked record's primary value.
        const client = clientOf(standIn)
        const [apollo] = yield* call(() => client("Projects").create([{ fields: { Name: "Apollo" } }]))
        const [task] = yield* call(() =>
          client("Tasks").create([{ fields: { Name: "Launch", Project: [apollo!.id] } }])
        )
        assert.deepStrictEqual((yield* call(() => client("Projects").find(apollo!.id))).get("Tasks"), [task!.id])
        const byDisplay = yield* call(() => client("Tasks").select({ filterByFormula: "{Project} = 'Apollo'" }).all())
        assert.deepStrictEqual(
          byDisplay.map((r) => r.id),
          [task!.id]
        )
        const byId = yield* call(() =>
          client("Tasks")
            .select({ filterByFormula: `FIND('${apollo!.id}', ARRAYJOIN({Project}))` })
            .all()
        )
        assert.deepStrictEqual(byId, [])
        const missing = yield* failure(() =>
          client("Tasks").create([{ fields: { Name: "X", Project: ["recAAAAAAAAAAAAAA"] } }])
        )
        assert.deepStrictEqual([missing.error, missing.statusCode], ["ROW_DOES_NOT_EXIST", 422])
        yield* call(() => client("Tasks").destroy([task!.id]))
        assert.isUndefined((yield* call(() => client("Projects").find(apollo!.id))).get("Tasks"))
      })
    )
  )
})
