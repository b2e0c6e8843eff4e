import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { answersPerRead } from "../../adapters/http/decisions/LongPollAnswers.ts"

const Envelope = Schema.Struct({ data: Schema.Struct({ at: Schema.Date }) })

describe("long-poll answers (one per read of a decision)", () => {
  it("encodes a read once, however many waiters it answers, with the schema's encoding as JSON", () => {
    const made: Array<number> = []
    const answerOf = answersPerRead(Envelope, (read: { readonly n: number }) => {
      made.push(read.n)
      return { data: { at: new Date(read.n) } }
    })
    const read = { n: 0 }
    const answers = Array.from({ length: 100 }, () => answerOf(read))
    assert.deepStrictEqual(made, [0])
    assert.isTrue(answers.every((answer) => answer === answers[0]))
    const answer = answers[0]!
    assert.strictEqual(answer.status, 200)
    assert.strictEqual(answer.body._tag, "Uint8Array")
    if (answer.body._tag !== "Uint8Array") return
    assert.strictEqual(answer.body.contentType, "application/json")
    assert.strictEqual(new TextDecoder().decode(answer.body.body), '{"data":{"at":"1970-01-01T00:00:00.000Z"}}')
  })

  it("a new read (another change, or another organization's read of the decision) gets an answer of its own", () => {
    const made: Array<number> = []
    const answerOf = answersPerRead(Envelope, (read: { readonly n: number }) => {
      made.push(read.n)
      return { data: { at: new Date(read.n) } }
    })
    const first = answerOf({ n: 1 })
    const second = answerOf({ n: 1 })
    assert.notStrictEqual(first, second)
    assert.deepStrictEqual(made, [1, 1])
  })
})
