import { assert, describe, it } from "@effect/vitest"
import { Effect, Result, Schema } from "effect"
import * as fc from "fast-check"
import {
  decodeCursor,
  Email,
  encodeCursor,
  ErrorTaxonomy,
  failure,
  IdGenerator,
  IdGeneratorUlid,
  isoAt,
  isUlid,
  isUserSafe,
  normalizeEmail,
  toPage,
  ValidationError,
  bodyIssue,
  headerIssue,
  pathIssue,
  queryIssue,
  schemaIssues
} from "../../core/kernel/index.ts"

describe("email normalisation", () => {
  it("trims and lower-cases, and is idempotent", () => {
    fc.assert(
      fc.property(fc.emailAddress(), fc.constantFrom("", " ", "\t", "  \n"), (email, pad) => {
        const once = normalizeEmail(`${pad}${email.toUpperCase()}${pad}`)
        assert.strictEqual(once, email.toLowerCase())
        assert.strictEqual(normalizeEmail(once), once)
      })
    )
  })

  it("the Email schema decodes to the normal form and refuses non-emails", () => {
    const decode = Schema.decodeUnknownResult(Email)
    assert.deepStrictEqual(decode("  Ada@Example.COM "), Result.succeed("ada@example.com"))
    for (const bad of [
      "",
      "ada",
      "ada@",
      "@example.com",
      "a b@example.com",
      "ada@example",
      `${"a".repeat(250)}@x.io`
    ]) {
      assert.isTrue(Result.isFailure(decode(bad)), bad)
    }
  })
})

describe("user-safe messages", () => {
  it("accepts ordinary messages and taxonomy codes", () => {
    for (const ok of ["The decision is already resolved.", "Use VALIDATION_ERROR details.", "Retry in 30 seconds."]) {
      assert.isTrue(isUserSafe(ok), ok)
    }
  })

  it("refuses stack traces, file paths, environment variable names and vendor names", () => {
    for (const bad of [
      "Error: x\n    at Object.<anonymous> (/srv/app/main.js:1:1)",
      "cannot open /var/lib/data/file.db",
      "C:\\Users\\app\\secret.txt missing",
      "DATABASE_URL is not set",
      "set HUB_SECRETS_KEY first",
      "connect ECONNREFUSED 127.0.0.1:5432",
      "PostgreSQL said no",
      "Airtable rate limit",
      "pglite crashed",
      ""
    ]) {
      assert.isFalse(isUserSafe(bad), bad)
    }
  })

  it("the failure envelope replaces an unsafe message with the code's own", () => {
    assert.deepStrictEqual(failure("UPSTREAM_ERROR", "Airtable returned 503 at /v0/app"), {
      error: { code: "UPSTREAM_ERROR", message: ErrorTaxonomy.UPSTREAM_ERROR.message }
    })
    assert.deepStrictEqual(failure("NOT_FOUND", "No such decision."), {
      error: { code: "NOT_FOUND", message: "No such decision." }
    })
  })

  it("every generic taxonomy message is itself user-safe", () => {
    for (const [code, entry] of Object.entries(ErrorTaxonomy)) assert.isTrue(isUserSafe(entry.message), code)
  })
})

describe("cursor paging", () => {
  it("a cursor decodes to the key it encodes", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.integer())), (key) => {
        assert.deepStrictEqual(decodeCursor(encodeCursor(key)), Result.succeed(key))
      })
    )
  })

  it("refuses cursors it did not issue", () => {
    for (const bad of ["", "not a cursor!", "e30", Buffer.from('{"a":1}').toString("base64url"), "x".repeat(600)]) {
      const decoded = decodeCursor(bad)
      assert.isTrue(Result.isFailure(decoded), bad)
      if (Result.isFailure(decoded)) {
        assert.deepStrictEqual(decoded.failure.details, [
          { in: "query", field: "cursor", message: "is not a cursor this list returned" }
        ])
      }
    }
  })

  it("cuts limit + 1 rows into a page whose cursor names the last row kept", () => {
    const rows = ["a", "b", "c"]
    assert.deepStrictEqual(
      toPage(rows, 3, (r) => [r]),
      { items: rows, nextCursor: undefined }
    )
    const page = toPage(rows, 2, (r) => [r])
    assert.deepStrictEqual(page.items, ["a", "b"])
    assert.deepStrictEqual(decodeCursor(page.nextCursor!), Result.succeed(["b"]))
  })
})

describe("validation details", () => {
  it("does not compile a detail that does not say where its field was, nor an empty list", () => {
    // These lines are checked by `tsc -p .`: each must be a type error, or the check itself fails.
    const compileChecks = () => [
      // @ts-expect-error a detail names its place
      new ValidationError({ message: "Bad.", details: [{ field: "name", message: "is required" }] }),
      // @ts-expect-error the places are body, query, path and header
      new ValidationError({ message: "Bad.", details: [{ in: "cookie", field: "sid", message: "is required" }] }),
      // @ts-expect-error details, when given, name at least one field
      new ValidationError({ message: "Bad.", details: [] })
    ]
    assert.isFunction(compileChecks)
  })

  it('names each field a schema refused where the request carried it, the whole value as the field ""', () => {
    const Body = Schema.Struct({ name: Schema.String, options: Schema.Array(Schema.Struct({ label: Schema.String })) })
    const refused = Schema.decodeUnknownResult(Body, { errors: "all" })({ options: [{ label: 1 }] })
    assert.isTrue(Result.isFailure(refused))
    if (Result.isFailure(refused)) {
      assert.deepStrictEqual(
        schemaIssues("body", refused.failure.issue).map((issue) => [issue.in, issue.field]),
        [
          ["body", "name"],
          ["body", "options.0.label"]
        ]
      )
    }
    const whole = Schema.decodeUnknownResult(Schema.String)(42)
    if (Result.isFailure(whole)) {
      assert.deepStrictEqual(
        schemaIssues("query", whole.failure.issue).map((issue) => [issue.in, issue.field]),
        [["query", ""]]
      )
    } else assert.fail("a number is not a string")
    assert.deepStrictEqual(
      [bodyIssue("a", "x"), queryIssue("b", "y"), pathIssue("c", "z"), headerIssue("D", "w")].map((i) => i.in),
      ["body", "query", "path", "header"]
    )
  })
})

describe("ids", () => {
  it.effect("are ULIDs, strictly increasing even within one millisecond", () =>
    Effect.gen(function* () {
      const ids = yield* IdGenerator.pipe(Effect.flatMap((g) => Effect.all(Array.from({ length: 100 }, () => g.next))))
      assert.isTrue(ids.every(isUlid))
      assert.deepStrictEqual([...ids].sort(), ids)
      assert.strictEqual(new Set(ids).size, ids.length)
    }).pipe(Effect.provide(IdGeneratorUlid))
  )
})

describe("timestamps", () => {
  it("isoAt writes what a date's own ISO text says, for any time, in any order", () => {
    const time = fc.oneof(
      fc.integer({ min: 0, max: 253_402_300_799_999 }),
      // Near now, where times of one second follow each other, and on the edges of seconds.
      fc.integer({ min: 1_795_000_000_000, max: 1_795_000_003_000 }),
      fc
        .tuple(fc.integer({ min: 0, max: 10_000 }), fc.constantFrom(-1, 0, 1, 999))
        .map(([s, d]) => 1_795_000_000_000 + s * 1000 + d),
      fc.double({ min: -1e15, max: 8.64e15, noNaN: true }),
      fc.constantFrom(-1, -0, 0, 0.5, 999.9, 1000, 253_402_300_799_999, 253_402_300_800_000, -62_198_755_200_000)
    )
    fc.assert(
      fc.property(fc.array(time, { minLength: 1, maxLength: 20 }), (times) => {
        for (const ms of times) assert.strictEqual(isoAt(ms), new Date(ms).toISOString(), String(ms))
      }),
      { numRuns: 2000 }
    )
  })

  it("isoAt refuses what is not a time, as a date does", () => {
    for (const ms of [Number.NaN, Number.POSITIVE_INFINITY, 8.64e15 + 1]) {
      assert.throws(() => isoAt(ms), RangeError)
    }
  })
})
