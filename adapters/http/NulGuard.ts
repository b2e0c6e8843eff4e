import { Effect, Predicate } from "effect"
import { HttpServerRequest } from "effect/http"
import type { ErrorRenderer } from "./ErrorEnvelopeMiddleware.ts"
import type { ErrorCode } from "../../core/kernel/index.ts"

const hasNul = (value: unknown): boolean => {
  if (typeof value === "string") return value.includes("\u0000")
  if (Array.isArray(value)) return value.some(hasNul)
  if (Predicate.isObject(value)) return Object.entries(value).some(([k, v]) => k.includes("\u0000") || hasNul(v))
  return false
}

/**
 * Text is never allowed to hold U+0000: Postgres refuses it in text and jsonb, so a request the memory
 * adapters would store would fail on SQL. Refused up front, for every adapter alike, as a validation error.
 * Only bodies that can contain one (the escape `\u0000`, or the raw byte) are parsed for the check.
 */
export const rejectNul = <E, R>(
  httpEffect: Effect.Effect<any, E, R>,
  render: ErrorRenderer,
  code: ErrorCode
): Effect.Effect<any, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const inUrl = request.url.includes("%00")
    let inBody = false
    if (!inUrl && request.method !== "GET" && request.method !== "HEAD") {
      const text = yield* Effect.orElseSucceed(request.text, () => "")
      if (text.includes("\\u0000") || text.includes("\u0000")) {
        try {
          inBody = hasNul(JSON.parse(text))
        } catch {
          inBody = text.includes("\u0000")
        }
      }
    }
    if (inUrl || inBody) {
      return render(request, {
        code,
        message: "Text must not contain NUL characters.",
        details: [{ in: inUrl ? "path" : "body", field: "", message: "must not contain the character U+0000" }]
      })
    }
    return yield* httpEffect
  })
