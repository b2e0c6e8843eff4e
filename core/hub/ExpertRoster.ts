import { Clock, Context, Effect, Layer, Ref, Schema } from "effect"
import { normalizeEmail } from "../kernel/Email.ts"

/** One client of the expert-sessions roster and the engineers actively matched to them. */
export interface RosterClient {
  readonly email: string
  readonly activeEngineers: ReadonlyArray<string>
}

/**
 * What the expert-sessions roster answers: `{data: {clients: [{email, activeEngineers: [...]}]}}`. Every
 * adapter decodes with it, so an answer of another shape is refused the same way everywhere.
 */
export const RosterAnswer = Schema.Struct({
  data: Schema.Struct({
    clients: Schema.Array(Schema.Struct({ email: Schema.String, activeEngineers: Schema.Array(Schema.String) }))
  })
})

/** The roster could not be read: unconfigured, unreachable, refused, or an answer of another shape. */
export class RosterUnavailable extends Schema.TaggedError<RosterUnavailable>()("RosterUnavailable", {
  cause: Schema.optionalKey(Schema.Defect())
}) {}

/** The expert-sessions roster, an upstream of the hub (adapters/http/hub/ExpertRosterHttp.ts, or memory). */
export class ExpertRoster extends Context.Service<
  ExpertRoster,
  { readonly clients: Effect.Effect<ReadonlyArray<RosterClient>, RosterUnavailable> }
>()("core/hub/ExpertRoster") {}

/** No roster configured: every read is unavailable, so every engineer has no matched clients. */
export const ExpertRosterUnconfigured: Layer.Layer<ExpertRoster> = Layer.succeed(
  ExpertRoster,
  ExpertRoster.of({ clients: Effect.fail(new RosterUnavailable({})) })
)

/** How long one read of the roster is used. */
export const rosterCacheMillis = 60_000

/**
 * The roster read at most once per `ttlMillis` by this instance. Only a successful read is kept (a failed
 * one is tried again on the next request). The copy lives in this process alone, and that is safe: it is a
 * cache of an upstream that every instance reads for itself, never a state that a later request needs, so
 * two instances differ at most by one minute of the roster.
 */
export const ExpertRosterCached = (
  ttlMillis: number = rosterCacheMillis
): Layer.Layer<ExpertRoster, never, ExpertRoster> =>
  Layer.effect(
    ExpertRoster,
    Effect.gen(function* () {
      const upstream = yield* ExpertRoster
      const kept = yield* Ref.make<{ readonly atMillis: number; readonly clients: ReadonlyArray<RosterClient> }>({
        atMillis: Number.NEGATIVE_INFINITY,
        clients: []
      })
      return ExpertRoster.of({
        clients: Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const last = yield* Ref.get(kept)
          if (now - last.atMillis < ttlMillis && now >= last.atMillis) return last.clients
          const clients = yield* upstream.clients
          yield* Ref.set(kept, { atMillis: now, clients })
          return clients
        })
      })
    })
  )

/**
 * The clients whose active engineers include `email` (compared trimmed and case-insensitively). Empty for
 * anyone who is not an engineer, and whenever the roster cannot be read: a failure never widens the answer.
 */
export const matchedClients = Effect.fn("ExpertRoster.matchedClients")(function* (email: string) {
  const roster = yield* ExpertRoster
  const engineer = normalizeEmail(email)
  const clients = yield* roster.clients.pipe(
    Effect.catchTag("RosterUnavailable", () =>
      Effect.as(Effect.logWarning("the expert roster could not be read: no matched clients"), [])
    )
  )
  const matched = new Set<string>()
  for (const client of clients) {
    if (client.activeEngineers.some((e) => normalizeEmail(e) === engineer)) matched.add(normalizeEmail(client.email))
  }
  return [...matched]
})
