import { Clock, Effect, Layer, Redacted } from "effect"
import { sign } from "../../core/auth/Signature.ts"
import { IdGenerator } from "../../core/kernel/Ids.ts"
import { HubEventPublisher, HubPublishFailed, type HubAnswer } from "../../core/events/HubEventPublisher.ts"

export interface HubEventPublisherHttpConfig {
  /** The hub's base URL; events go to `<hubUrl>/api/webhooks/events`. */
  readonly hubUrl: string
  /** The producer's signing key (AUTH-2), the one the hub holds for this service. */
  readonly signingKey: Redacted.Redacted<string>
  /** Per attempt. Default 10 s. */
  readonly timeoutMs?: number | undefined
}

/**
 * The HubEventPublisher port over fetch. Each attempt gets the four delivery headers the hub requires: a fresh
 * `X-Platform-Timestamp` (unix seconds) and `X-Platform-Signature` (AUTH-2 over `<timestamp>.<the exact
 * bytes sent>`), `X-Platform-Event-Id` (the event's id, which the hub checks against the body's) and a new
 * ULID as `X-Platform-Delivery`. Redirects are not followed: a signed event goes only where configured.
 */
export const HubEventPublisherHttp = (config: HubEventPublisherHttpConfig) =>
  Layer.effect(
    HubEventPublisher,
    Effect.gen(function* () {
      const ids = yield* IdGenerator
      const url = `${config.hubUrl.replace(/\/+$/, "")}/api/webhooks/events`
      const timeoutMs = config.timeoutMs ?? 10_000
      return HubEventPublisher.of({
        publish: Effect.fn("HubEventPublisherHttp.publish")(function* (event) {
          const body = Buffer.from(JSON.stringify(event), "utf8")
          const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
          const headers = {
            "content-type": "application/json",
            "x-platform-signature": sign({ secret: Redacted.value(config.signingKey), timestamp, payload: body }),
            "x-platform-timestamp": String(timestamp),
            "x-platform-event-id": event.id,
            "x-platform-delivery": yield* ids.next
          }
          return yield* Effect.tryPromise({
            // `signal` aborts the request when the attempt is interrupted, its timeout included (not
            // `AbortSignal.any` with `AbortSignal.timeout`: the runtime may collect the timeout's signal unfired).
            try: async (signal): Promise<HubAnswer> => {
              const response = await fetch(url, { method: "POST", headers, body, redirect: "manual", signal })
              // Only the status matters; the body is dropped so the connection is freed.
              await response.body?.cancel()
              return { status: response.status, retryAfter: response.headers.get("retry-after") ?? undefined }
            },
            catch: () => new HubPublishFailed({ reason: "network", message: "The hub could not be reached." })
          }).pipe(
            Effect.timeoutOrElse({
              duration: timeoutMs,
              orElse: () =>
                Effect.fail(new HubPublishFailed({ reason: "timeout", message: "The hub did not answer in time." }))
            })
          )
        })
      })
    })
  )

/**
 * Whether the hub's public event catalog (`GET /api/v1/event-catalog`) assigns `type` to `service`: then
 * the hub is up, the producer registered and its events accepted. Any failure answers false.
 */
export const hubCatalogLists = (options: {
  readonly hubUrl: string
  readonly service: string
  readonly type: string
  readonly timeoutMs?: number | undefined
}): Effect.Effect<boolean> =>
  Effect.promise(async (signal) => {
    const url = `${options.hubUrl.replace(/\/+$/, "")}/api/v1/event-catalog?service=${encodeURIComponent(options.service)}`
    try {
      const response = await fetch(url, { redirect: "manual", signal })
      if (!response.ok) {
        await response.body?.cancel()
        return false
      }
      const body = (await response.json()) as {
        data?: { types?: ReadonlyArray<{ type?: unknown; producer?: unknown }> }
      }
      return (body.data?.types ?? []).some((entry) => entry.type === options.type && entry.producer === options.service)
    } catch {
      return false
    }
  }).pipe(
    // A hub that takes the connection and never answers (its port open before its routes are served) is a
    // "not yet" too. The timeout interrupts the request, which aborts it. (Not `AbortSignal.any` with
    // `AbortSignal.timeout`: the runtime may collect the timeout's signal, and then it never fires.)
    Effect.timeoutOrElse({ duration: options.timeoutMs ?? 5_000, orElse: () => Effect.succeed(false) })
  )
