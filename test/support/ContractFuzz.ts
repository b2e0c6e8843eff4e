import fc from "fast-check"
import { request as httpRequest } from "node:http"
import { assert } from "vitest"

/** One operation of a service's OpenAPI document. */
export interface Operation {
  readonly method: string
  readonly path: string
  readonly query: ReadonlyArray<string>
}

/** A service as the fuzzer meets it: where it answers, its error dialect, and credentials it may present. */
export interface FuzzTarget {
  readonly name: string
  readonly baseUrl: string
  /** `envelope`: `{error: {code, message, details?}}`; `tasks`: the task inbox's `{error, fields?}`. */
  readonly dialect: "envelope" | "tasks"
  /** Header sets that authenticate on some plane of the service (valid credentials reach the handlers). */
  readonly credentials: ReadonlyArray<Record<string, string>>
}

const methods = new Set(["get", "post", "put", "patch", "delete"])

/** Every operation of the service's OpenAPI document (`/api/v1/openapi`). */
export const operationsOf = async (baseUrl: string): Promise<ReadonlyArray<Operation>> => {
  const document = (await (await fetch(`${baseUrl}/api/v1/openapi`)).json()) as {
    paths: Record<string, Record<string, { parameters?: ReadonlyArray<{ name: string; in: string }> }>>
  }
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => methods.has(method))
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        query: (operation.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name)
      }))
  )
}

// ---- hostile input ----

/** Any UTF-16 code unit, lone surrogates and U+0000 included. */
const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code))

const hostileString = fc.oneof(
  { arbitrary: fc.string({ maxLength: 12 }), weight: 3 },
  { arbitrary: fc.string({ unit: anyUnit, maxLength: 12 }), weight: 3 },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "",
      " ",
      "\u0000",
      "a\ud800",
      "\udc00",
      "\ud83d\ude80",
      "__proto__",
      "constructor",
      "prototype",
      "toString",
      "..",
      ".",
      "-1",
      "1e309",
      "NaN",
      "99999999999999999999",
      "rec00000000000000",
      "01JD2Z3Q4R5S6T7V8W9X0Y1Z2A",
      "<script>",
      "' OR 1=1 --"
    )
  },
  { arbitrary: fc.integer({ min: 300, max: 70_000 }).map((n) => "x".repeat(n)), weight: 1 }
)

const hostileKey = fc.oneof(hostileString, fc.constantFrom("__proto__", "constructor", "prototype", "data", "error"))

/** JSON values built from hostile strings; objects may carry prototype keys. */
const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    hostileString,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(hostileKey, tie("value"), { maxKeys: 4 })
  )
})).value

/** Arrays nested `depth` deep, as JSON text. */
const nested = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`

/** A body's text: JSON of hostile values, JSON with escapes a store cannot hold, deep nesting, or not JSON. */
const hostileBody = fc.oneof(
  hostileValue.map((value) => JSON.stringify(value) ?? "null"),
  fc.dictionary(fc.string({ maxLength: 8 }), hostileValue, { maxKeys: 6 }).map((value) => JSON.stringify(value)),
  fc.constantFrom(
    '{"title":"a\\ud800","name":"\\udc00","email":"x\\u0000@y.z"}',
    '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}',
    '{"a":1e309,"b":-0,"c":123456789012345678901234567890}',
    "{",
    "null",
    "[]",
    '""',
    "\u0000",
    "title=x%00&email=a%ED%A0%80"
  ),
  fc.integer({ min: 65, max: 3000 }).map(nested),
  fc.integer({ min: 70_000, max: 300_000 }).map((n) => JSON.stringify({ title: "x".repeat(n) }))
)

const contentType = fc.constantFrom(
  "application/json",
  "application/json",
  "application/json; charset=utf-16",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/xml",
  undefined
)

/** A path or query segment as a client could send it: encoded hostile text, or raw tricks. */
const segment = fc.oneof(
  // encodeURIComponent throws on a lone surrogate; those reach the body and headers instead.
  { arbitrary: hostileString.map((text) => encodeURIComponent(text.replace(/[\ud800-\udfff]/g, "x"))), weight: 4 },
  { arbitrary: fc.constantFrom("x", "acme", "decisions", "tasks", "recAAAAAAAAAAAAAA", "1"), weight: 3 },
  { arbitrary: fc.constantFrom("..", ".", "%2e%2e", "%2F", "%00", "%ED%A0%80", "%FF", "%", "a%2Fb", "%20"), weight: 1 }
)

/** Header values a client can send (Latin-1 without control characters), some too large for any server. */
const headerValue = fc.oneof(
  {
    arbitrary: fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      maxLength: 40
    }),
    weight: 6
  },
  {
    arbitrary: fc.constantFrom("Bearer ", "Bearer dcd_x", "Basic Og==", "hub_session=x", "\u00ff\u00e9", "null"),
    weight: 3
  },
  { arbitrary: fc.integer({ min: 1000, max: 20_000 }).map((n) => "k".repeat(n)), weight: 1 }
)

const extraHeaders = fc.dictionary(
  fc.constantFrom(
    "authorization",
    "idempotency-key",
    "x-api-key",
    "cookie",
    "origin",
    "x-workspace-token",
    "x-decisions-api-key",
    "x-workspace-api-key",
    "x-platform-signature",
    "x-platform-timestamp",
    "accept",
    "mcp-session-id",
    "__proto__"
  ),
  headerValue,
  { maxKeys: 3 }
)

export interface HostileRequest {
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: string | undefined
}

/** Requests for one operation: its path with hostile parameters, hostile query, headers and body. */
export const hostileRequest = (operation: Operation, target: FuzzTarget): fc.Arbitrary<HostileRequest> => {
  const params = operation.path.match(/\{[^}]+\}/g) ?? []
  return fc
    .record({
      params: fc.array(segment, { minLength: params.length, maxLength: params.length }),
      query: fc.array(
        fc.tuple(
          operation.query.length > 0 ? fc.oneof(fc.constantFrom(...operation.query), segment) : segment,
          segment
        ),
        { maxLength: 3 }
      ),
      credentials: fc.constantFrom<Record<string, string> | undefined>(undefined, ...target.credentials),
      headers: extraHeaders,
      contentType,
      body: fc.option(hostileBody, { nil: undefined, freq: 4 }),
      otherMethod: fc.option(fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"), { freq: 6 })
    })
    .map(({ params: values, query, credentials, headers, contentType: type, body, otherMethod }) => {
      let path = operation.path
      values.forEach((value) => (path = path.replace(/\{[^}]+\}/, value)))
      const search = query.map(([k, v]) => `${k}=${v}`).join("&")
      const method = otherMethod ?? operation.method
      const sendsBody = method !== "GET" && method !== "OPTIONS" && body !== undefined
      return {
        method,
        path: search.length > 0 ? `${path}?${search}` : path,
        headers: {
          ...headers,
          ...credentials,
          ...(sendsBody && type !== undefined ? { "content-type": type } : {})
        },
        body: sendsBody ? body : undefined
      }
    })
}

/** The operation with plain parameters, no query and no body, under the same credentials. */
export const plainRequest = (operation: Operation, headers: Record<string, string>): HostileRequest => ({
  method: operation.method,
  path: operation.path.replace(/\{[^}]+\}/g, "x"),
  headers: Object.fromEntries(
    Object.entries(headers).filter(([name]) =>
      ["authorization", "x-api-key", "x-decisions-api-key", "x-workspace-token"].includes(name)
    )
  ),
  body: undefined
})

export interface Answer {
  readonly status: number
  readonly text: string
}

/** Sends a request exactly as built (node:http keeps the path as written), with its own timeout. */
export const send = (baseUrl: string, request: HostileRequest) =>
  new Promise<Answer>((resolve, reject) => {
    const url = new URL(baseUrl)
    // Node frames a DELETE (or GET) body with neither a length nor chunks: the server would read the body as a
    // second, malformed request. Every body is sent with its length, as any client does.
    const framed =
      request.body === undefined ||
      Object.keys(request.headers).some((h) => /^(content-length|transfer-encoding)$/i.test(h))
        ? request.headers
        : { ...request.headers, "content-length": String(Buffer.byteLength(request.body)) }
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: request.method,
        path: request.path,
        headers: framed,
        // A connection of its own per request: an answer or a reset is then this request's, never a
        // keep-alive connection the server closed after an earlier answer.
        agent: false,
        timeout: 20_000
      },
      (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (chunk) => (text += chunk))
        res.on("end", () => resolve({ status: res.statusCode!, text }))
        res.on("error", reject)
      }
    )
    req.on("timeout", () => req.destroy(new Error("no answer within 20 s")))
    req.on("error", reject)
    req.end(request.body)
  })

/** What an error answer must never show: a stack, a file path, a vendor, a setting's name. */
const leaks = [
  /\bat [^\s]+ \(/,
  /\.(ts|js|mjs):\d+/,
  /\/work\/|node_modules|\/home\/|\/tmp\//,
  /pglite|postgres|airtable|sqlstate|effect\/|ajv|re2js/i,
  /DATABASE_URL|DATA_DIR|_API_KEY|_SECRETS_KEY|_ADMIN_KEY|_EMBED_KEY|_SIGNING_KEY|HUB_CONTEXT_KEYS/,
  /TypeError|RangeError|SyntaxError|ReferenceError|undefined is not|cannot read propert/i
]

/** The property of every answer: never a 5xx; an error is the service's documented shape and leaks nothing. */
export const checkAnswer = (
  target: FuzzTarget,
  request: HostileRequest,
  answer: Answer,
  /** The status of a plain request to the same operation: a 501, 502 or 503 it shares is the environment's. */
  baseline?: number
) => {
  const where = `${target.name} ${request.method} ${request.path.slice(0, 200)} → ${answer.status} ${answer.text.slice(0, 300)}`
  if (answer.status === 500 || answer.status !== baseline) assert.isBelow(answer.status, 500, where)
  if (answer.status < 400 || request.method === "HEAD") return
  if (answer.status === 405 && answer.text === "") return
  let body: any
  try {
    body = JSON.parse(answer.text)
  } catch {
    assert.fail(`not JSON: ${where}`)
  }
  // The task inbox's uniform `/api/v1` group is the platform's contract: the envelope.
  if (target.dialect === "tasks" && !/^\/api\/v1(\/|\?|$)/.test(request.path)) {
    assert.isString(body.error, where)
    if (body.fields !== undefined) assert.isObject(body.fields, where)
  } else {
    assert.isObject(body.error, where)
    assert.isString(body.error.code, where)
    assert.isString(body.error.message, where)
  }
  for (const leak of leaks) assert.notMatch(answer.text, leak, where)
}
