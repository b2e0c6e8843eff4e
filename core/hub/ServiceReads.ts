import { Context, type Effect, Schema } from "effect"

/** Where and as whom the hub reads a registered service: its base URL, its API key, and a person's identity token. */
export interface ServiceReadTarget {
  readonly baseUrl: string
  readonly apiKeyHeader: string
  readonly apiKey: string
  /** An identity token minted for the person the read is for (AUTH-4, `X-Workspace-Token`). */
  readonly token: string
}

/** The service did not answer a 200 with `{data: ...}` in time. */
export class ServiceReadFailed extends Schema.TaggedError<ServiceReadFailed>()("ServiceReadFailed", {
  cause: Schema.optionalKey(Schema.Defect())
}) {}

/**
 * A registered service's reads of the uniform contract (`GET /api/v1/summary`, `GET /api/v1/search?q=`), called
 * by the hub with the service's API key and a person's identity token (adapters/http/hub/ServiceReadsHttp.ts,
 * or memory). Answers the `data` of the service's envelope as it came (its shape is the service's own).
 */
export class ServiceReads extends Context.Service<
  ServiceReads,
  {
    readonly read: (
      target: ServiceReadTarget,
      path: "/api/v1/summary" | "/api/v1/search",
      query: Readonly<Record<string, string>>
    ) => Effect.Effect<unknown, ServiceReadFailed>
  }
>()("core/hub/ServiceReads") {}
