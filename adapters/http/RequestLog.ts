import { Cause, Clock, Context, Effect, Exit, type LogLevel, Metric } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { pooledRandomBytes } from "../../core/auth/RandomPool.ts"

/** Answers per service, method and status (exported at `/metrics` and over OpenTelemetry when configured). */
const answered = Metric.counter("http_server_requests_total", {
  description: "HTTP answers by service, method and status",
  incremental: true
})

/** How long answers took, in milliseconds, per service. */
const durations = Metric.histogram("http_server_request_duration_ms", {
  description: "HTTP answer time in milliseconds by service",
  boundaries: Metric.exponentialBoundaries({ start: 1, factor: 2, count: 14 })
})

/** A caller's own request id is kept when it is short and plain; anything else is replaced by ours. */
const callerRequestId = /^[A-Za-z0-9._:-]{1,128}$/

/** A W3C trace context header: version 00, a 32-hex trace id that is not all zeros, a 16-hex parent id. */
const traceparent = /^00-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/

/** The trace id of a well-formed `traceparent`, or undefined. */
export const traceIdOf = (header: string | undefined): string | undefined => {
  const match = header === undefined ? null : traceparent.exec(header.trim())
  const traceId = match?.[1]
  return traceId === undefined || /^0+$/.test(traceId) ? undefined : traceId
}

/**
 * The request's id: the caller's `X-Request-Id` when it is plain, else the trace id of its `traceparent`, else
 * a new random one. Every answer echoes it in `X-Request-Id`, and every log line written while the request is
 * handled carries it, so one request can be followed from a client's report through the logs.
 */
export const requestIdOf = (headers: Readonly<Record<string, string | undefined>>): string => {
  const given = headers["x-request-id"]?.trim()
  if (given !== undefined && callerRequestId.test(given)) return given
  return traceIdOf(headers["traceparent"]) ?? pooledRandomBytes(12).toString("hex")
}

/**
 * The request log of one service (replacing the router's own): every log line written while a request is
 * handled names the service and the request id (and the trace id when the caller sent one); one line per
 * answer with method, path (no query string: it may carry an email address), status and duration; a defect
 * is logged with its cause at error level. The answer's line is at `answerLevel` (info unless given: the server
 * writes it at debug level outside production, where a line per health poll is noise). The answer carries
 * `X-Request-Id`. Each answer also counts in the metrics `http_server_requests_total` and
 * `http_server_request_duration_ms`.
 */
export const requestLog = (service: string, answerLevel: LogLevel.Severity = "Info") => {
  const logAnswer = Effect.logWithLevel(answerLevel)
  // The counters of this service, one per method and status, made once rather than on every answer.
  const counters = new Map<string, Metric.Counter<number>>()
  const counterOf = (method: string, status: number) => {
    const key = `${method} ${status}`
    let counter = counters.get(key)
    if (counter === undefined) {
      counter = Metric.withAttributes(answered, { service, method, status: String(status) })
      counters.set(key, counter)
    }
    return counter
  }
  const serviceDurations = Metric.withAttributes(durations, { service })
  return <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
    // Read from the fiber in one step each side of the request: the request, the clock, and after it the
    // counters' context (what `Clock.currentTimeMillis` and `Metric.update` would read, in fewer steps).
    Effect.withFiber((fiber) => {
      const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
      const started = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
      const headers = request.headers
      const requestId = requestIdOf(headers)
      const traceId = traceIdOf(headers["traceparent"])
      const queryAt = request.url.indexOf("?")
      const path = queryAt === -1 ? request.url : request.url.slice(0, queryAt)
      const annotations: Record<string, string> = { service, requestId, ...(traceId === undefined ? {} : { traceId }) }
      // Answers written by the router itself bypass what this middleware returns: they get the header here.
      const handled = Effect.annotateLogs(
        HttpEffect.withPreResponseHandler(Effect.exit(app), (_, response) =>
          Effect.succeed(HttpServerResponse.setHeader(response, "x-request-id", requestId))
        ),
        annotations
      )
      return Effect.flatMap(handled, (exit) =>
        Effect.withFiber((after) => {
          const durationMs = after.getRef(Clock.Clock).currentTimeMillisUnsafe() - started
          const status = Exit.isSuccess(exit) ? exit.value.status : 500
          counterOf(request.method, status).updateUnsafe(1, after.context)
          serviceDurations.updateUnsafe(durationMs, after.context)
          // The answer's line carries the request's annotations and its own in one step (a nested
          // annotation of the line inside the request's costs several times more, for the same line).
          const line = {
            ...annotations,
            "http.method": request.method,
            "http.url": path,
            "http.durationMs": durationMs
          }
          if (Exit.isSuccess(exit)) {
            return Effect.as(
              Effect.annotateLogs(logAnswer("Sent HTTP response"), { ...line, "http.status": status }),
              HttpServerResponse.setHeader(exit.value, "x-request-id", requestId)
            )
          }
          if (Cause.hasInterruptsOnly(exit.cause)) return exit
          // A client that went away before its answer (the platform's 499) is not the server's failure.
          const failure = Cause.squash(exit.cause)
          if (HttpServerResponse.isHttpServerResponse(failure) && failure.status === 499) {
            return Effect.andThen(
              Effect.annotateLogs(logAnswer("Client closed the request"), { ...line, "http.status": 499 }),
              exit
            )
          }
          return Effect.andThen(Effect.annotateLogs(Effect.logError("Request failed", exit.cause), line), exit)
        })
      )
    })
}
