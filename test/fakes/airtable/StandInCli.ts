import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Config, Console, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { newId } from "./FieldTypes.ts"
import { startAirtableStandIn } from "./Server.ts"

/**
 * `npm run airtable:stand-in`: the Airtable stand-in on its own, so the platform can be tried on a base without
 * an Airtable account. It serves one empty base (run `npm run airtable:setup` to give it the task inbox's tables)
 * and keeps everything in memory until it stops.
 */

const port = Flag.Int("port").pipe(
  Flag.withDescription("The port to listen on, on 127.0.0.1 (default: one the system picks)"),
  Flag.withFallbackConfig(Config.Port("AIRTABLE_STAND_IN_PORT")),
  Flag.optional
)
const token = Flag.String("token").pipe(
  Flag.withDescription("The bearer token to accept (default: AIRTABLE_TOKEN, else a new one)"),
  Flag.withFallbackConfig(Config.NonEmptyString("AIRTABLE_TOKEN")),
  Flag.optional
)
const base = Flag.String("base").pipe(
  Flag.withDescription("The id of the base to serve (default: AIRTABLE_BASE_ID, else a new one)"),
  Flag.withFallbackConfig(Config.NonEmptyString("AIRTABLE_BASE_ID")),
  Flag.filter(
    (id) => /^app[A-Za-z0-9]{14}$/.test(id),
    (id) => `${id} is not a base id: app and 14 letters or digits`
  ),
  Flag.optional
)

const standIn = Command.make("airtable-stand-in", { port, token, base }, (flags) =>
  Effect.gen(function* () {
    const tokenValue = Option.getOrElse(flags.token, () => newId("pat"))
    const baseId = Option.getOrElse(flags.base, () => newId("app"))
    const server = yield* Effect.acquireRelease(
      Effect.promise(() =>
        startAirtableStandIn({ tokens: [tokenValue], bases: { [baseId]: {} }, port: Option.getOrUndefined(flags.port) })
      ),
      (s) =>
        Effect.promise(() => s.close()).pipe(
          Effect.andThen(
            Console.log(
              `Stopped after ${s.requests.length} requests; at most ${s.busiestSecond(baseId)} to the base in any second; ` +
                `${s.requests.filter((r) => r.status === 429).length} answered 429.`
            )
          )
        )
    )
    yield* Console.log(
      [
        `The Airtable stand-in listens at ${server.url} (Ctrl-C stops it; its data lives in memory until then).`,
        "Point the platform at it with:",
        `  AIRTABLE_ENDPOINT_URL=${server.url}`,
        `  AIRTABLE_BASE_ID=${baseId}`,
        `  AIRTABLE_TOKEN=${tokenValue}`,
        "then create the task inbox's tables: npm run airtable:setup"
      ].join("\n")
    )
    return yield* Effect.never
  }).pipe(Effect.scoped)
).pipe(Command.withDescription("Serve a local stand-in of Airtable's Web API with one empty base"))

Command.run(standIn, { version: "0.1.0" }).pipe(Effect.provide(NodeServices.layer), NodeRuntime.runMain)
