import { Array as Arr, Effect, Predicate } from "effect"
import { HttpServerRequest } from "effect/http"
import type { FieldIssue } from "../../core/kernel/index.ts"
import type { ErrorRenderer, ValidationCode } from "./ErrorResponse.ts"

/** Deeper JSON is refused: no request of any service needs it, and stores and serializers recurse on it. */
export const maxJsonDepth = 64
/** At most this many bad fields are named in one answer. */
const maxReported = 10
const fieldMax = 200

const nulMessage = "must not contain the character U+0000"
const surrogateMessage = "must be valid Unicode text (it holds an unpaired surrogate)"

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/** Why a string cannot be stored (Postgres refuses U+0000 in text and jsonb, and unpaired surrogates in jsonb). */
const textProblem = (text: string): string | undefined =>
  text.includes("\u0000") ? nulMessage : text.search(loneSurrogate) === -1 ? undefined : surrogateMessage

/** A field name safe to answer: unstorable characters replaced, bounded. */
const safeField = (segments: ReadonlyArray<string>) => {
  const joined = segments
    .join(".")
    .replace(loneSurrogate, "\ufffd")
    .replace(/\u0000/g, "\ufffd")
  return joined.length <= fieldMax ? joined : `${joined.slice(0, fieldMax - 1)}…`
}

/** Every unstorable key or string in a parsed JSON value (up to `maxReported`), walked without recursion. */
const jsonFindings = (root: unknown): Array<FieldIssue> => {
  const findings: Array<FieldIssue> = []
  const pending: Array<{ readonly value: unknown; readonly path: ReadonlyArray<string> }> = [{ value: root, path: [] }]
  while (pending.length > 0 && findings.length < maxReported) {
    const { value, path } = pending.pop()!
    if (typeof value === "string") {
      const problem = textProblem(value)
      if (problem !== undefined) findings.push({ in: "body", field: safeField(path), message: problem })
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) pending.push({ value: value[i], path: [...path, String(i)] })
    } else if (Predicate.isObject(value)) {
      for (const [key, item] of Object.entries(value).reverse()) {
        const problem = textProblem(key)
        if (problem !== undefined) findings.push({ in: "body", field: safeField([...path, key]), message: problem })
        else pending.push({ value: item, path: [...path, key] })
      }
    }
  }
  return findings.slice(0, maxReported)
}

/** The deepest nesting of arrays and objects in JSON text, counted without parsing (strings skipped). */
const jsonDepth = (text: string): number => {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth)
    else if (c === 0x7d || c === 0x5d) depth--
  }
  return deepest
}

/** Text that could hold an unstorable character once parsed: the raw character, or its JSON escape. */
const mayHoldUnstorable = (text: string) => text.includes("\u0000") || /\\u(?:0000|[dD][89a-fA-F])/.test(text)

const paramsFindings = (params: URLSearchParams, where: "query" | "body"): Array<FieldIssue> => {
  const findings: Array<FieldIssue> = []
  for (const [key, value] of params) {
    const problem = textProblem(key) ?? textProblem(value)
    if (problem !== undefined) findings.push({ in: where, field: safeField([key]), message: problem })
  }
  return findings.slice(0, maxReported)
}

const bodyFindings = (request: HttpServerRequest.HttpServerRequest, text: string): Array<FieldIssue> => {
  const contentType = request.headers["content-type"] ?? ""
  if (/application\/x-www-form-urlencoded/i.test(contentType)) {
    return paramsFindings(new URLSearchParams(text), "body")
  }
  if (jsonDepth(text) > maxJsonDepth) {
    return [{ in: "body", field: "", message: `must not nest arrays and objects deeper than ${maxJsonDepth} levels` }]
  }
  if (!mayHoldUnstorable(text)) return []
  try {
    return jsonFindings(JSON.parse(text))
  } catch {
    // Not JSON: the route's own parsing answers for it, unless the raw text itself cannot be stored.
    const problem = textProblem(text)
    return problem === undefined ? [] : [{ in: "body", field: "", message: problem }]
  }
}

const urlFindings = (url: string): Array<FieldIssue> => {
  const queryAt = url.indexOf("?")
  const path = queryAt === -1 ? url : url.slice(0, queryAt)
  if (/%00/.test(path)) return [{ in: "path", field: "", message: nulMessage }]
  return queryAt === -1 ? [] : paramsFindings(new URLSearchParams(url.slice(queryAt + 1)), "query")
}

/**
 * Text is checked once, here at the boundary of every service, for what the stores cannot hold: U+0000
 * (Postgres refuses it in text and jsonb) and unpaired UTF-16 surrogates (refused in jsonb, and by the
 * upstream record store). Path, query string and body (JSON or form) alike; JSON nested deeper than
 * `maxJsonDepth` too. A refusal is a validation error naming each bad field, before any route runs, so the
 * memory adapters and SQL answer the same. A JSON body is parsed for the check only when its text could
 * hold such a character.
 */
export const rejectUnstorableText = <E, R>(
  httpEffect: Effect.Effect<any, E, R>,
  render: ErrorRenderer,
  code: ValidationCode
): Effect.Effect<any, E, R | HttpServerRequest.HttpServerRequest> => {
  const answer = (
    request: HttpServerRequest.HttpServerRequest,
    findings: Array<FieldIssue>
  ): Effect.Effect<any, E, R> =>
    Arr.isReadonlyArrayNonEmpty(findings)
      ? Effect.succeed(
          render(request, {
            code,
            message: `Text must be valid Unicode without NUL characters, nested at most ${maxJsonDepth} levels.`,
            details: findings
          })
        )
      : httpEffect
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const findings = urlFindings(request.url)
    if (findings.length > 0 || request.method === "GET" || request.method === "HEAD") return answer(request, findings)
    return Effect.flatMap(
      Effect.orElseSucceed(request.text, () => ""),
      (text) => answer(request, bodyFindings(request, text))
    )
  })
}
