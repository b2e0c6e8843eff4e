import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { serviceRoutes } from "../../adapters/http/ServiceHttp.ts"
import { UniformGroup } from "../../adapters/http/uniform/UniformApi.ts"
import { uniformHandlers } from "../../adapters/http/uniform/UniformHandlers.ts"
import { bodyIssue, isUserSafe, NotFound, Readiness, Unavailable, ValidationError } from "../../core/kernel/index.ts"
import { decisionsErrorResponse, hubErrorResponse } from "../../adapters/http/ErrorResponse.ts"
import { MaxBodyBytes } from "../../adapters/http/BodyLimit.ts"
import { reportAllIssues } from "../../adapters/http/ParseOptions.ts"
import { request, serveForTest } from "../support/Http.ts"

class Probe extends HttpApiGroup.make("probe").add(
  HttpApiEndpoint.post("create", "/things", {
    payload: Schema.Struct({ name: Schema.String.check(Schema.isMinLength(1)), count: Schema.Int }),
    success: Schema.Struct({ data: Schema.Struct({ name: Schema.String }) })
  }),
  HttpApiEndpoint.get("list", "/things", {
    query: { limit: Schema.optional(Schema.NumberFromString.check(Schema.isInt())) },
    success: Schema.Struct({ data: Schema.Array(Schema.String) })
  }),
  HttpApiEndpoint.post("big", "/big", {
    payload: Schema.Struct({ name: Schema.String }),
    success: Schema.Struct({ data: Schema.Struct({ length: Schema.Number }) })
  }).annotate(MaxBodyBytes, 10_000),
  HttpApiEndpoint.post("small", "/small/:id", {
    params: { id: Schema.String },
    payload: Schema.Struct({ name: Schema.String }),
    success: Schema.Struct({ data: Schema.Struct({ length: Schema.Number }) })
  }).annotate(MaxBodyBytes, 100),
  HttpApiEndpoint.get("crash", "/crash", { success: Schema.Struct({}) }),
  HttpApiEndpoint.get("missing", "/missing", { success: Schema.Struct({}) })
) {}

class TestApi extends HttpApi.make("test")
  .add(UniformGroup)
  .add(Probe)
  .annotate(HttpApi.ParseOptions, reportAllIssues) {}

const manifest = { service: "test", displayName: "Test", contractVersion: "v1", requiredTier: "free" } as const

const handlers = Layer.mergeAll(
  HttpApiBuilder.group(TestApi, "uniform", (h) =>
    Effect.map(uniformHandlers({ manifest, version: { service: "test" } }), (impl) => h.handleAll(impl))
  ),
  HttpApiBuilder.group(TestApi, "probe", (h) =>
    Effect.succeed(
      h.handleAll({
        create: ({ payload }) => Effect.succeed({ data: { name: payload.name } }),
        list: () => Effect.succeed({ data: ["a"] }),
        big: ({ payload }) => Effect.succeed({ data: { length: payload.name.length } }),
        small: ({ payload }) => Effect.succeed({ data: { length: payload.name.length } }),
        crash: () => Effect.die(new Error("boom at /srv/app/secret.ts:12 with DATABASE_URL")),
        missing: () => hubErrorResponse(new NotFound({}))
      })
    )
  )
)

const serve = (ready: Effect.Effect<void, Unavailable>) =>
  serveForTest(
    serviceRoutes({ api: TestApi, handlers, errors: { dialect: "hub", maxBodyBytes: 1024 } }).pipe(
      Layer.provide(Layer.succeed(Readiness)({ check: ready }))
    )
  )

const post = (url: string, body: string, contentType = "application/json") =>
  request(url, { method: "POST", headers: { "content-type": contentType }, body })

describe("the error envelope on every route", () => {
  it.live("answers health with {data: {status: ok}}", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve(Effect.void)
      const answer = yield* request(`${baseUrl}/api/v1/health`)
      assert.strictEqual(answer.status, 200)
      assert.deepStrictEqual(answer.json, { data: { status: "ok" } })
    }).pipe(Effect.scoped)
  )

  it.live("answers ready 503 UNAVAILABLE with the envelope when a dependency is down", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve(Effect.fail(new Unavailable({})))
      const answer = yield* request(`${baseUrl}/api/v1/ready`)
      assert.strictEqual(answer.status, 503)
      assert.strictEqual(answer.json.error.code, "UNAVAILABLE")
    }).pipe(Effect.scoped)
  )

  it.live("answers unknown paths 404 NOT_FOUND", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve(Effect.void)
      const answer = yield* request(`${baseUrl}/api/v1/nothing-here`)
      assert.strictEqual(answer.status, 404)
      assert.deepStrictEqual(answer.json, { error: { code: "NOT_FOUND", message: "Not found." } })
    }).pipe(Effect.scoped)
  )

  it.live("answers malformed JSON 400 INVALID_JSON", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve(Effect.void)
      const answer = yield* post(`${baseUrl}/things`, "{not json")
      assert.strictEqual(answer.status, 400)
      assert.strictEqual(answer.json.error.code, "INVALID_JSON")
    }).pipe(Effect.scoped)
  )

  it.live("answers schema failures 400 VALIDATION_ERROR naming each bad field", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve(Effect.void)
      const answer = yield* post(`${baseUrl}/things`, JSON.stringify({ name: "", count: 1.5 }))
      assert.strictEqual(answer.status, 400)
      assert.strictEqual(answer.json.error.code, "VALIDATION_ERROR")
      const fields = (answer.json.error.details as Array<{ field: string; in: string }>).map((d) => d.field).sort()
      assert.deepStrictEqual(fields, ["count", "name"])
      assert.isTrue(answer.json.error.details.every((d: { in: string }) => d.in === "body"))
    }).pipe(Effect.scoped)
  )

  it.live("answers a bad query parameter 400 VALIDATION_ERROR in the query", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve(Effect.void)
      const answer = yield* request(`${baseUrl}/things?limit=abc`)
      assert.strictEqual(answer.status, 400)
      assert.deepStrictEqual(
        answer.json.error.details.map((d: { in: string; field: string }) => [d.in, d.field]),
        [["query", "limit"]]
      )
    }).pipe(Effect.scoped)
  )

  it.live("refuses NUL characters in a body or path with VALIDATION_ERROR, for every adapter alike", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve(Effect.void)
      const escaped = yield* post(`${baseUrl}/things`, '{"name":"a\\u0000b","count":1}')
      assert.strictEqual(escaped.status, 400)
      assert.strictEqual(escaped.json.error.code, "VALIDATION_ERROR")
      const inKey = yield* post(`${baseUrl}/things`, '{"name":"ok","count":1,"x\\u0000":1}')
      assert.strictEqual(inKey.status, 400)
      const literal = yield* post(`${baseUrl}/things`, '{"name":"a\\\\u0000b","count":1}')
      assert.strictEqual(literal.status, 200, "an escaped backslash followed by u0000 is ordinary text")
      const inPath = yield* request(`${baseUrl}/things%00`)
      assert.strictEqual(inPath.status, 400)
    }).pipe(Effect.scoped)
  )

  it.live("answers a body over the route's limit 413 with the envelope", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve(Effect.void)
      const answer = yield* post(`${baseUrl}/things`, JSON.stringify({ name: "x".repeat(5000), count: 1 }))
      assert.strictEqual(answer.status, 413)
      assert.strictEqual(answer.json.error.code, "PAYLOAD_TOO_LARGE")
    }).pipe(Effect.scoped)
  )

  it.live("applies a route's own body limit, above or below the service's", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve(Effect.void)
      const body = (n: number) => JSON.stringify({ name: "x".repeat(n) })
      const big = yield* post(`${baseUrl}/big`, body(5000))
      assert.strictEqual(big.status, 200, big.text)
      const tooBig = yield* post(`${baseUrl}/big`, body(20_000))
      assert.strictEqual(tooBig.status, 413)
      assert.deepStrictEqual(tooBig.json.error.details, { limitBytes: 10_000 })
      const small = yield* post(`${baseUrl}/small/1`, body(300))
      assert.strictEqual(small.status, 413)
      assert.deepStrictEqual(small.json.error.details, { limitBytes: 100 })
      assert.strictEqual((yield* post(`${baseUrl}/small/1`, body(10))).status, 200)
      const service = yield* post(`${baseUrl}/things`, JSON.stringify({ name: "x".repeat(5000), count: 1 }))
      assert.deepStrictEqual(service.json.error.details, { limitBytes: 1024 })
    }).pipe(Effect.scoped)
  )

  it.live("answers a non-JSON content type with the envelope", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve(Effect.void)
      const answer = yield* post(`${baseUrl}/things`, "name=x", "text/csv")
      assert.strictEqual(answer.status, 415)
      assert.strictEqual(answer.json.error.code, "VALIDATION_ERROR")
    }).pipe(Effect.scoped)
  )

  it.live("answers defects 500 INTERNAL_ERROR without a stack, path or variable name", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve(Effect.void)
      const answer = yield* request(`${baseUrl}/crash`)
      assert.strictEqual(answer.status, 500)
      assert.strictEqual(answer.json.error.code, "INTERNAL_ERROR")
      assert.isTrue(isUserSafe(answer.json.error.message))
      assert.notInclude(answer.text, "boom")
      assert.notInclude(answer.text, "/srv")
      assert.notInclude(answer.text, "DATABASE_URL")
    }).pipe(Effect.scoped)
  )

  it.live("answers domain errors with their taxonomy status", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve(Effect.void)
      const answer = yield* request(`${baseUrl}/missing`)
      assert.strictEqual(answer.status, 404)
      assert.strictEqual(answer.json.error.code, "NOT_FOUND")
    }).pipe(Effect.scoped)
  )

  it.effect("maps a ValidationError to validation_error in the decisions dialect", () =>
    Effect.gen(function* () {
      const response = yield* decisionsErrorResponse(
        new ValidationError({ message: "Bad.", details: [bodyIssue("name", "is required")] })
      )
      assert.strictEqual(response.status, 400)
    })
  )
})
