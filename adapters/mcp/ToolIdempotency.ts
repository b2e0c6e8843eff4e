import { Effect } from "effect"
import { fingerprintRequest, runIdempotent, type RunIdempotentOptions } from "../../core/idempotency/Idempotency.ts"
import { IdempotencyStore } from "../../core/idempotency/IdempotencyStore.ts"
import { Transactions } from "../../core/kernel/Transactions.ts"
import type { CallerIdentity } from "../../core/decisions/Decisions.ts"
import type { ErrorEnvelope } from "../../core/kernel/index.ts"
import { answerFor } from "./ToolFailure.ts"

/** JSON with object keys sorted, so the same arguments sent in another key order are the same request. */
export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v
  )

const json = "application/json"

/**
 * A tool call that runs at most once per (caller key, idempotency key), on the same records and rules as
 * the HTTP `Idempotency-Key` (core/idempotency): the first call's answer, success or domain error, is kept
 * and a retry with the same arguments gets it back; the same key with other arguments is
 * `idempotency_conflict`. The scope is the HTTP caller plane's (`caller:<keyId>`): one key names one request
 * whichever door it came through (a tool call never matches an HTTP request, so reuse across them is a
 * conflict, never a second decision). The call is one unit of work with its kept answer; a defect or
 * interruption undoes it, as on HTTP.
 */
export const runIdempotentTool = <A, E, R>(options: {
  readonly store: IdempotencyStore["Service"]
  readonly transactions: Transactions["Service"]
  readonly caller: CallerIdentity
  readonly tool: string
  readonly key: string
  /** The decoded arguments without the key: what makes two calls the same call. */
  readonly arguments: unknown
  readonly run: Effect.Effect<A, E, R>
  readonly runOptions: RunIdempotentOptions
}): Effect.Effect<A, ErrorEnvelope, R> => {
  const scope = `caller:${options.caller.keyId}`
  const fingerprint = fingerprintRequest({
    caller: scope,
    method: "MCP",
    path: `tools/call ${options.tool}`,
    body: canonicalJson(options.arguments)
  })
  const kept = options.run.pipe(
    Effect.map((answer) => ({ status: 200, contentType: json, body: JSON.stringify(answer) })),
    Effect.catch((error) =>
      Effect.map(answerFor(error), (answered) => ({
        status: answered.status,
        contentType: json,
        body: JSON.stringify(answered.envelope)
      }))
    )
  )
  return runIdempotent({ scope, key: options.key, fingerprint }, kept, options.runOptions).pipe(
    Effect.provideService(IdempotencyStore, options.store),
    Effect.provideService(Transactions, options.transactions),
    Effect.catch((error) => Effect.flatMap(answerFor(error), ({ envelope }) => Effect.fail(envelope))),
    Effect.flatMap((response) =>
      response.status < 400
        ? Effect.succeed(JSON.parse(response.body) as A)
        : Effect.fail(JSON.parse(response.body) as ErrorEnvelope)
    )
  )
}
