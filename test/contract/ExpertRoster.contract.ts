import { assert, describe, it } from "@effect/vitest"
import { Effect, type Layer, type Scope } from "effect"
import { ExpertRoster } from "../../core/hub/ExpertRoster.ts"

/** Makes the adapter over a roster that answers `answer` (a JSON value), or that cannot be reached (undefined). */
export type RosterOver = (answer: unknown) => Effect.Effect<Layer.Layer<ExpertRoster>, never, Scope.Scope>

const clients = [
  { email: "client-one@example.test", activeEngineers: ["eng@experts.test", "Other@Experts.test"] },
  { email: "client-two@example.test", activeEngineers: [] }
]

const read = (over: RosterOver, answer: unknown) =>
  Effect.flatMap(over(answer), (roster) =>
    Effect.provide(
      Effect.gen(function* () {
        return yield* (yield* ExpertRoster).clients
      }),
      roster
    )
  )

/** The ExpertRoster port's contract (core/hub/ExpertRoster.ts), run once per adapter. */
export const ExpertRosterContract = (name: string, over: RosterOver) =>
  describe(`ExpertRoster contract (${name})`, () => {
    it.live("answers the roster's clients with their active engineers, as the roster gave them", () =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* read(over, { data: { clients } }), clients)
        assert.deepStrictEqual(yield* read(over, { data: { clients: [] } }), [])
      })
    )

    it.live("ignores fields it does not read", () =>
      Effect.gen(function* () {
        const extra = { data: { clients: [{ ...clients[0], since: "2030-01-01" }], page: 1 }, meta: {} }
        assert.deepStrictEqual(yield* read(over, extra), [clients[0]!])
      })
    )

    it.live("is unavailable when the answer is of another shape", () =>
      Effect.gen(function* () {
        for (const answer of [
          { clients },
          { data: { clients: [{ email: "x@example.test" }] } },
          { data: { clients: [{ email: 7, activeEngineers: [] }] } },
          { data: {} },
          [],
          "clients",
          null
        ]) {
          const failure = yield* Effect.flip(read(over, answer))
          assert.strictEqual(failure._tag, "RosterUnavailable", JSON.stringify(answer))
        }
      })
    )

    it.live("is unavailable when the roster cannot be reached", () =>
      Effect.gen(function* () {
        assert.strictEqual((yield* Effect.flip(read(over, undefined)))._tag, "RosterUnavailable")
      })
    )
  })
