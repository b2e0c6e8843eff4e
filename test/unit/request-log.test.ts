import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, References } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { requestIdOf, requestLog, traceIdOf } from "../../adapters/http/RequestLog.ts"

interface Line {
  readonly message: unknown
  readonly level: string
  readonly annotations: Record<string, unknown>
}

/** Runs `app` as one request through the request log of "decisions", capturing every log line. */
const run = (
  headers: Record<string, string>,
  app: Effect.Effect<HttpServerResponse.HttpServerResponse> = Effect.succeed(HttpServerResponse.text("ok")),
  answerLevel?: "Info" | "Debug"
) =>
  Effect.gen(function* () {
    const lines: Array<Line> = []
    const capture = Logger.layer([
      Logger.make((options) => {
        lines.push({
          message: options.message,
          level: options.logLevel,
          annotations: { ...options.fiber.getRef(References.CurrentLogAnnotations) }
        })
      })
    ])
    const request = HttpServerRequest.fromWeb(new Request("http://local/api/v1/decisions?email=a@b.co", { headers }))
    const exit = yield* requestLog(
      "decisions",
      answerLevel
    )(app).pipe(
      Effect.provideService(HttpServerRequest.HttpServerRequest, request),
      Effect.provide(capture),
      Effect.exit
    )
    return { exit, lines }
  })

const through = (headers: Record<string, string>, app?: Effect.Effect<HttpServerResponse.HttpServerResponse>) =>
  Effect.map(run(headers, app), ({ exit, lines }) => {
    assert.strictEqual(exit._tag, "Success")
    return { response: (exit as { value: HttpServerResponse.HttpServerResponse }).value, lines }
  })

const trace = "4bf92f3577b34da6a3ce929d0e0e4736"

describe("the request log", () => {
  it.effect("names the service and the request id on every line, and echoes the id", () =>
    Effect.gen(function* () {
      const inner = Effect.as(Effect.log("inside the handler"), HttpServerResponse.text("ok", { status: 201 }))
      const { response, lines } = yield* through({ "x-request-id": "req-42" }, inner)
      assert.strictEqual(response.headers["x-request-id"], "req-42")
      assert.strictEqual(lines.length, 2)
      for (const line of lines) assert.deepInclude(line.annotations, { service: "decisions", requestId: "req-42" })
      const sent = lines[1]!
      assert.deepStrictEqual(sent.message, ["Sent HTTP response"])
      assert.deepInclude(sent.annotations, { "http.status": 201, "http.url": "/api/v1/decisions" })
      assert.notInclude(JSON.stringify(lines), "a@b.co")
    })
  )

  it.effect(
    "writes the line of each answer at info level, or at the level the server asks (debug in development)",
    () =>
      Effect.gen(function* () {
        const info = yield* run({ "x-request-id": "r-info" })
        assert.deepStrictEqual(
          info.lines.map((line) => line.level),
          ["Info"]
        )
        const debug = yield* run({ "x-request-id": "r-debug" }, undefined, "Debug")
        assert.deepStrictEqual(
          debug.lines.map((line) => [line.message, line.level]),
          [[["Sent HTTP response"], "Debug"]]
        )
      }).pipe(Effect.provideService(References.MinimumLogLevel, "All"))
  )

  it.effect("takes the trace id of a traceparent, else makes one; refuses odd caller ids", () =>
    Effect.gen(function* () {
      const traced = yield* through({ traceparent: `00-${trace}-00f067aa0ba902b7-01` })
      assert.strictEqual(traced.response.headers["x-request-id"], trace)
      assert.deepInclude(traced.lines[0]!.annotations, { traceId: trace })
      const fresh = yield* through({ "x-request-id": "has spaces <and> marks" })
      const id = fresh.response.headers["x-request-id"]!
      assert.match(id, /^[0-9a-f]{24}$/)
      const other = yield* through({})
      assert.notStrictEqual(other.response.headers["x-request-id"], id)
    })
  )

  it.effect("logs a defect with its cause at error level", () =>
    Effect.gen(function* () {
      const { exit, lines } = yield* run({ "x-request-id": "r1" }, Effect.die(new Error("boom")))
      assert.strictEqual(exit._tag, "Failure")
      assert.strictEqual(lines.length, 1)
      assert.strictEqual(lines[0]!.level, "Error")
      assert.deepInclude(lines[0]!.annotations, { service: "decisions", requestId: "r1" })
    })
  )

  it.effect("logs a client that went away (499) at the answers' level, not as an error", () =>
    Effect.gen(function* () {
      const gone = Effect.fail(
        HttpServerResponse.empty({ status: 499 })
      ) as unknown as Effect.Effect<HttpServerResponse.HttpServerResponse>
      const { exit, lines } = yield* run({ "x-request-id": "r2" }, gone)
      assert.strictEqual(exit._tag, "Failure")
      assert.strictEqual(lines.length, 1)
      assert.strictEqual(lines[0]!.level, "Info")
      assert.deepStrictEqual(lines[0]!.message, ["Client closed the request"])
      assert.deepInclude(lines[0]!.annotations, { requestId: "r2", "http.status": 499 })
    })
  )

  it("reads only well-formed trace contexts and plain caller ids", () => {
    assert.strictEqual(traceIdOf(`00-${trace}-00f067aa0ba902b7-01`), trace)
    assert.isUndefined(traceIdOf(`00-${"0".repeat(32)}-00f067aa0ba902b7-01`))
    assert.isUndefined(traceIdOf(`01-${trace}-00f067aa0ba902b7-01`))
    assert.isUndefined(traceIdOf("garbage"))
    assert.strictEqual(requestIdOf({ "x-request-id": "abc", traceparent: `00-${trace}-00f067aa0ba902b7-01` }), "abc")
    assert.notStrictEqual(requestIdOf({ "x-request-id": "x".repeat(129) }), "x".repeat(129))
  })
})
