import { Effect, Layer } from "effect"
import { GuardedHttpClient } from "../../adapters/http/GuardedHttpClient.ts"
import { RecordingAccessHttp } from "../../adapters/http/hub/RecordingAccessHttp.ts"
import { RecordingAccessMemory } from "../../adapters/memory/hub/RecordingAccessMemory.ts"
import { RecordingGrantAuditMemory } from "../../adapters/memory/hub/RecordingGrantAuditMemory.ts"
import { RecordingGrantAuditSql } from "../../adapters/sql/hub/RecordingGrantAuditSql.ts"
import { sqlBackends } from "../support/Databases.ts"
import { standIn } from "../support/StandIn.ts"
import { hubSqlOn } from "./hub-sql-layers.ts"
import { RecordingAccessContract, RecordingGrantAuditContract } from "./RecordingGrants.contract.ts"

RecordingGrantAuditContract("memory", RecordingGrantAuditMemory)
for (const backend of sqlBackends) RecordingGrantAuditContract(backend.name, hubSqlOn(RecordingGrantAuditSql, backend))

const viewersOf = (held: ReadonlyArray<string>) => new Map(held.map((id) => [id, new Set<string>()]))

RecordingAccessContract("memory", (recordings) =>
  Effect.sync(() => {
    const viewers = viewersOf(recordings)
    return {
      access: RecordingAccessMemory(viewers),
      baseUrl: "memory:",
      viewers: (id: string) => [...(viewers.get(id) ?? [])]
    }
  })
)

/**
 * Over HTTP against a stand-in of the recordings service: `POST /api/v1/recordings/{id}/access` with the API
 * key in the registered header and `{email, action}`; another key is 401, an unknown recording 404.
 */
RecordingAccessContract(
  "over HTTP",
  (recordings, credentials) =>
    Effect.gen(function* () {
      const viewers = viewersOf(recordings)
      const service = yield* standIn((seen) => {
        if (seen.headers[credentials.apiKeyHeader.toLowerCase()] !== credentials.apiKey)
          return { status: 401, json: {} }
        const id = /^\/api\/v1\/recordings\/([^/]+)\/access$/.exec(seen.url)?.[1]
        const allowed = id === undefined ? undefined : viewers.get(decodeURIComponent(id))
        if (seen.method !== "POST" || allowed === undefined) return { status: 404, json: {} }
        const change = JSON.parse(seen.body) as { readonly email: string; readonly action: string }
        if (change.action === "grant") allowed.add(change.email)
        else allowed.delete(change.email)
        return { status: 200, json: { data: {} } }
      })
      return {
        access: RecordingAccessHttp().pipe(Layer.provide(GuardedHttpClient({ allowLoopback: true }))),
        baseUrl: service.url,
        viewers: (id: string) => [...(viewers.get(id) ?? [])]
      }
    }),
  RecordingAccessHttp({ timeoutMillis: 2_000 }).pipe(Layer.provide(GuardedHttpClient({ allowLoopback: true })))
)
