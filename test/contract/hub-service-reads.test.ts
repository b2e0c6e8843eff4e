import { Effect, Layer } from "effect"
import { GuardedHttpClient } from "../../adapters/http/GuardedHttpClient.ts"
import { ServiceReadsHttp } from "../../adapters/http/hub/ServiceReadsHttp.ts"
import { ServiceReadsMemory } from "../../adapters/memory/hub/ServiceReadsMemory.ts"
import { standIn, unreachableUrl } from "../support/StandIn.ts"
import { ServiceReadsContract } from "./ServiceReads.contract.ts"

ServiceReadsContract("memory", (data, credentials) =>
  Effect.sync(() => {
    const seen: Array<{ readonly path: string; readonly query: Readonly<Record<string, string>> }> = []
    const reads = ServiceReadsMemory((request) => {
      if (request.apiKey !== credentials.apiKey || request.token !== credentials.token) return undefined
      seen.push({ path: request.path, query: request.query })
      return data
    })
    return { reads, baseUrl: "memory:", seen: () => seen }
  })
)

/** Over HTTP against a stand-in product that answers `{data}` to its API key with an identity token. */
ServiceReadsContract("over HTTP", (data, credentials) =>
  Effect.gen(function* () {
    if (data === undefined)
      return {
        reads: ServiceReadsHttp().pipe(Layer.provide(GuardedHttpClient({ allowLoopback: true }))),
        baseUrl: yield* unreachableUrl,
        seen: () => []
      }
    const product = yield* standIn((request) =>
      request.headers["x-workspace-api-key"] === credentials.apiKey &&
      request.headers["x-workspace-token"] === credentials.token
        ? { status: 200, json: { data } }
        : { status: 401, json: { error: { code: "UNAUTHORIZED", message: "No." } } }
    )
    return {
      reads: ServiceReadsHttp().pipe(Layer.provide(GuardedHttpClient({ allowLoopback: true }))),
      baseUrl: product.url,
      seen: () =>
        product.seen
          .filter((s) => s.headers["x-workspace-api-key"] === credentials.apiKey)
          .map((s) => {
            const url = new URL(s.url, "http://stand-in")
            return { path: url.pathname, query: Object.fromEntries(url.searchParams) }
          })
    }
  })
)
