import { Context, Schema, type Effect } from "effect"

/** One HTTP request the hub sends to a registered service while checking its conformance. */
export interface ProbeRequest {
  readonly method: "GET" | "POST"
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string | undefined
  /**
   * The target was configured by the operator (a first-party service running beside the hub), not
   * registered by a developer: a loopback address is fine even in production. Nothing else private is.
   */
  readonly operatorConfigured?: boolean | undefined
}

/**
 * What the service answered. `body` holds at most the adapter's cap of text (a conformance answer is small);
 * `truncated` says the service sent more. Header names are lower case.
 */
export interface ProbeAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly truncated: boolean
}

/** No answer at all: the address is not allowed, nothing listened, or the service took too long. */
export class ProbeFailed extends Schema.TaggedError<ProbeFailed>()("ProbeFailed", {
  reason: Schema.Literals(["blocked_address", "unreachable", "timeout"])
}) {}

/** The port through which the conformance check talks to a service; timeouts and limits are the adapter's. */
export class ServiceProbe extends Context.Service<
  ServiceProbe,
  { readonly send: (request: ProbeRequest) => Effect.Effect<ProbeAnswer, ProbeFailed> }
>()("core/hub/ServiceProbe") {}
