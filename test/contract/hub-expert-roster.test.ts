import { Effect, Redacted } from "effect"
import { ExpertRosterHttp } from "../../adapters/http/hub/ExpertRosterHttp.ts"
import { ExpertRosterMemory } from "../../adapters/memory/hub/ExpertRosterMemory.ts"
import { standIn, unreachableUrl } from "../support/StandIn.ts"
import { ExpertRosterContract } from "./ExpertRoster.contract.ts"

const key = "expert-roster-internal-key-0123"

ExpertRosterContract("memory", (answer) => Effect.succeed(ExpertRosterMemory(answer)))

ExpertRosterContract("over HTTP", (answer) =>
  Effect.gen(function* () {
    if (answer === undefined)
      return ExpertRosterHttp({ url: `${yield* unreachableUrl}/roster`, key: Redacted.make(key) })
    // The stand-in answers only its own key: the adapter must send it as `internalauthorization`.
    const roster = yield* standIn((seen) =>
      seen.headers["internalauthorization"] === key ? { status: 200, json: answer } : { status: 401, json: {} }
    )
    return ExpertRosterHttp({ url: `${roster.url}/roster`, key: Redacted.make(key) })
  })
)
