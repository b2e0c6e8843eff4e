import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Logger, Redacted, References } from "effect"
import { formatJsonLine, makeLineLogger } from "../../apps/server/LogLines.ts"

const turnOver = () => new Promise<void>((resolve) => setImmediate(resolve))

describe("log lines written once per turn (apps/server/LogLines.ts)", () => {
  it("writes the lines of one turn together, in order, when the turn is over; flush writes what waits", async () => {
    const writes: Array<string> = []
    const { logger, flush } = makeLineLogger(
      Logger.make((options) => String(options.message)),
      (text) => writes.push(text)
    )
    const log = (message: string) =>
      Effect.runSync(Effect.logInfo(message).pipe(Effect.provide(Logger.layer([logger]))))
    log("one")
    log("two")
    log("three")
    assert.deepStrictEqual(writes, [])
    await turnOver()
    assert.deepStrictEqual(writes, ["one\ntwo\nthree\n"])
    log("four")
    flush()
    assert.deepStrictEqual(writes, ["one\ntwo\nthree\n", "four\n"])
    // Nothing left for the turn's end to write.
    await turnOver()
    assert.strictEqual(writes.length, 2)
  })
})

describe("the JSON line format (apps/server/LogLines.ts)", () => {
  it("writes every line as Logger.formatJson does, plain or not", () => {
    const lines = (logger: Logger.Logger<unknown, string>) => {
      const out: Array<string> = []
      const capture = Logger.map(logger, (line) => {
        out.push(line)
      })
      const secret = Redacted.make("s3cret")
      Effect.runSync(
        Effect.gen(function* () {
          yield* Effect.annotateLogs(Effect.log("Sent HTTP response"), {
            service: "hub",
            "http.status": 202,
            "http.durationMs": 1.5,
            flag: true
          })
          yield* Effect.log("two", "parts")
          yield* Effect.annotateLogs(Effect.logWarning("with a secret"), { key: secret })
          yield* Effect.annotateLogs(Effect.log({ nested: { secret } }), { big: 10n, obj: { a: 1 } })
          yield* Effect.logError("failed", Cause.fail(new Error("boom")))
          yield* Effect.withLogSpan(Effect.log("in a span"), "step")
        }).pipe(Effect.provide(Logger.layer([capture])), Effect.provideService(References.MinimumLogLevel, "All"))
      )
      return out
    }
    const ours = lines(formatJsonLine)
    const theirs = lines(Logger.formatJson)
    assert.strictEqual(ours.length, 6)
    assert.notInclude(ours.join("\n"), "s3cret")
    // Every line alike but its times and its fiber.
    const timeless = (line: string) =>
      line
        .replace(/"timestamp":"[^"]*"/, "")
        .replace(/"fiberId":"[^"]*"/, "")
        .replace(/"step":\d+/, "")
    assert.deepStrictEqual(ours.map(timeless), theirs.map(timeless))
  })
})
