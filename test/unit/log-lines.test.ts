import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger } from "effect"
import { makeLineLogger } from "../../apps/server/LogLines.ts"

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
