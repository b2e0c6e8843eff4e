import { Effect, Layer, Schema } from "effect"
import { ExpertRoster, RosterAnswer, RosterUnavailable } from "../../../core/hub/ExpertRoster.ts"

/**
 * The expert roster held in memory as the upstream would answer it (a JSON value), decoded like any answer;
 * `undefined` is a roster that cannot be reached.
 */
export const ExpertRosterMemory = (answer: unknown): Layer.Layer<ExpertRoster> =>
  Layer.succeed(
    ExpertRoster,
    ExpertRoster.of({
      clients:
        answer === undefined
          ? Effect.fail(new RosterUnavailable({}))
          : Schema.decodeUnknownEffect(RosterAnswer)(answer).pipe(
              Effect.map((decoded) => decoded.data.clients),
              Effect.mapError((cause) => new RosterUnavailable({ cause }))
            )
    })
  )
