import { Schema } from "effect"
import { HttpServerResponse } from "effect/http"

/**
 * The 200 answers of long-polls, made once per read of a decision. The waiters of a decision are handed the
 * very same read when it changes (core/decisions/DecisionWatches.ts), so with a hundred waiters the answer is
 * encoded once and its bytes written a hundred times, rather than encoded for each. An answer is what the
 * endpoint itself makes of `body(read)`: the body encoded with its success `schema`, as JSON, status 200.
 * Reads are keyed by identity and held weakly: an answer lives as long as the read it was made from.
 */
export const answersPerRead = <S extends Schema.ConstraintEncoder<unknown>, R extends object>(
  schema: S,
  body: (read: R) => S["Type"]
) => {
  const encode = Schema.encodeSync(schema)
  const answers = new WeakMap<R, HttpServerResponse.HttpServerResponse>()
  return (read: R): HttpServerResponse.HttpServerResponse => {
    let answer = answers.get(read)
    if (answer === undefined) {
      answer = HttpServerResponse.text(JSON.stringify(encode(body(read))), { contentType: "application/json" })
      answers.set(read, answer)
    }
    return answer
  }
}
