import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A faithful local stand-in of Airtable's record API (shared/reference/airtable-api.md), for tests and
 * demos where the real service cannot be reached. This version serves single records: `GET`, `PATCH`
 * (only sent fields change) and `PUT` (unsent fields cleared) on `/v0/{baseId}/{tableId}/{recordId}`,
 * with bearer tokens, the documented error bodies, and injectable faults. Listing and batch writes come
 * with the task inbox's Airtable adapter.
 */
export interface StandInTable {
  /** Field names the table has; writing another is 422 UNKNOWN_FIELD_NAME. */
  readonly fields: ReadonlyArray<string>
  /** Record id to its fields (empty values are left out, as the real API does). */
  readonly records: Map<string, Record<string, unknown>>
}

export interface StandInRequest {
  readonly method: string
  readonly path: string
  readonly authorization: string | undefined
  readonly body: unknown
}

export interface AirtableStandIn {
  readonly url: string
  /** baseId → tableId → table. */
  readonly bases: Map<string, Map<string, StandInTable>>
  readonly requests: Array<StandInRequest>
  /** Answers the next requests with these statuses (and types), first to last, before serving again. */
  readonly failNext: Array<{ readonly status: number; readonly type?: string; readonly retryAfter?: string }>
  readonly close: () => Promise<void>
}

const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers })
  res.end(JSON.stringify(body))
}

const error = (res: ServerResponse, status: number, type: string, message: string) =>
  send(res, status, { error: { type, message } })

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    let text = ""
    req.setEncoding("utf8")
    req.on("data", (chunk: string) => (text += chunk))
    req.on("end", () => resolve(text))
    req.on("error", reject)
  })

const isEmpty = (value: unknown) =>
  value === "" || value === false || value === null || (Array.isArray(value) && value.length === 0)

const clean = (fields: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(fields).filter(([, value]) => !isEmpty(value)))

export const startAirtableStandIn = async (options: {
  readonly tokens: ReadonlyArray<string>
  readonly bases?: Record<
    string,
    Record<string, { fields: ReadonlyArray<string>; records?: Record<string, Record<string, unknown>> }>
  >
}): Promise<AirtableStandIn> => {
  const bases = new Map<string, Map<string, StandInTable>>()
  for (const [baseId, tables] of Object.entries(options.bases ?? {})) {
    const byTable = new Map<string, StandInTable>()
    for (const [tableId, table] of Object.entries(tables)) {
      byTable.set(tableId, { fields: table.fields, records: new Map(Object.entries(table.records ?? {})) })
    }
    bases.set(baseId, byTable)
  }
  const requests: Array<StandInRequest> = []
  const failNext: AirtableStandIn["failNext"] = []
  const createdTime = new Date("2030-01-01T00:00:00.000Z").toISOString()

  const server = createServer(async (req, res) => {
    const text = await readBody(req)
    let body: unknown = undefined
    try {
      body = text === "" ? undefined : JSON.parse(text)
    } catch {
      body = text
    }
    const path = new URL(req.url ?? "/", "http://stand-in").pathname
    requests.push({ method: req.method ?? "", path, authorization: req.headers.authorization, body })

    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")
    if (auth === null || !options.tokens.includes(auth[1]!)) {
      return error(res, 401, "AUTHENTICATION_REQUIRED", "Authentication required")
    }
    const fault = failNext.shift()
    if (fault !== undefined) {
      return send(
        res,
        fault.status,
        { error: { type: fault.type ?? "RETRIABLE_ERROR", message: "Injected failure" } },
        fault.retryAfter === undefined ? {} : { "retry-after": fault.retryAfter }
      )
    }
    const match = /^\/v0\/([^/]+)\/([^/]+)\/([^/]+)\/?$/.exec(path)
    if (match === null) return send(res, 404, { error: "NOT_FOUND" })
    const [, baseId, tableId, recordId] = match.map((part) => decodeURIComponent(part ?? "")) as [
      string,
      string,
      string,
      string
    ]
    const table = bases.get(baseId)?.get(tableId)
    if (table === undefined) {
      return error(
        res,
        403,
        "INVALID_PERMISSIONS_OR_MODEL_NOT_FOUND",
        "Invalid permissions, or the requested model was not found. Check that both your user and your token have the required permissions, and that the model names and/or ids are correct."
      )
    }
    const record = table.records.get(recordId)
    if (record === undefined) return error(res, 404, "MODEL_ID_NOT_FOUND", "Record not found")
    if (req.method === "GET") return send(res, 200, { id: recordId, createdTime, fields: clean(record) })
    if (req.method !== "PATCH" && req.method !== "PUT") return send(res, 404, { error: "NOT_FOUND" })
    const fields = (body as { fields?: unknown } | undefined)?.fields
    if (typeof fields !== "object" || fields === null || Array.isArray(fields)) {
      return error(
        res,
        422,
        "INVALID_REQUEST_UNKNOWN",
        "Invalid request: parameter validation failed. Check your request data."
      )
    }
    for (const name of Object.keys(fields)) {
      if (!table.fields.includes(name)) return error(res, 422, "UNKNOWN_FIELD_NAME", `Unknown field name: "${name}"`)
    }
    const next = req.method === "PUT" ? { ...(fields as Record<string, unknown>) } : { ...record, ...fields }
    table.records.set(recordId, next)
    return send(res, 200, { id: recordId, createdTime, fields: clean(next) })
  })

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    bases,
    requests,
    failNext,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
