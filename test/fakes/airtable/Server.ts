import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { ApiError, apiError, authenticationRequired, invalidRequest, notFound, rateLimited } from "./ApiError.ts"
import { Bases, type ListParams, type RecordWrite, type StandInTable } from "./Bases.ts"
import { type Collaborator, newId } from "./FieldTypes.ts"

/**
 * A local stand-in of Airtable's Web API (records and metadata), for tests and for trying the platform
 * without an Airtable account. It answers as the real API does, error bodies included, and keeps the real
 * API's limits: at most 10 records a write, at most 100 a page, and at most `perSecond` requests to a base
 * in any second (a request past that is 429, and so is every request to that base for `penaltyMs` after).
 * Every request is recorded with its time, so a test can check that a client never sent more than that.
 */

export interface SeedField {
  readonly name: string
  readonly type: string
  readonly options?: unknown
}

export interface SeedTable {
  /** The table's name; by default the key it is given under. */
  readonly name?: string | undefined
  /** The first is the primary field; a bare name is a single line text field. */
  readonly fields: ReadonlyArray<string | SeedField>
  /** Record id to its fields by name. */
  readonly records?: Record<string, Record<string, unknown>> | undefined
}

export interface StandInOptions {
  /** Bearer tokens the stand-in accepts; any other is 401. */
  readonly tokens: ReadonlyArray<string>
  /** baseId -> table id (`tbl…`) or name -> table. A base given with no tables exists and is empty. */
  readonly bases?: Record<string, Record<string, SeedTable>> | undefined
  /** The workspace's people, whom collaborator fields may name. */
  readonly collaborators?: ReadonlyArray<Collaborator> | undefined
  readonly port?: number | undefined
  readonly host?: string | undefined
  /** Requests per second per base, and how long a base answers 429 once that was exceeded. Default 5 and 30 s. */
  readonly rateLimit?: { readonly perSecond?: number; readonly penaltyMs?: number } | undefined
  readonly now?: (() => number) | undefined
}

export interface StandInRequest {
  readonly method: string
  readonly path: string
  readonly query: string
  readonly authorization: string | undefined
  readonly body: unknown
  /** The base the request named, if any. */
  readonly baseId: string | undefined
  /** When it arrived, in milliseconds since the epoch. */
  readonly at: number
  /** The status answered; 0 while none is (or when the connection was dropped). */
  status: number
}

/** What the stand-in does with one request instead of serving it at once. */
export interface Fault {
  /** The status to answer (the body names `type`); 0 drops the connection unanswered; 200 serves the request. */
  readonly status: number
  readonly type?: string
  readonly retryAfter?: string
  /** Waits this long before answering: a slow upstream, for a client's timeout. */
  readonly delayMs?: number
}

export interface AirtableStandIn {
  readonly url: string
  /** baseId -> tableId -> table: the stand-in's data, to seed or inspect. */
  readonly bases: Map<string, Map<string, StandInTable>>
  /** The table of a base by id or name (throws when there is none). */
  readonly table: (baseId: string, idOrName: string) => StandInTable
  readonly requests: Array<StandInRequest>
  /** Faults for the next requests, first to last (after the token and the rate limit are checked). */
  readonly failNext: Array<Fault>
  /** The most requests the base received in any span of one second (all of them, refused ones included). */
  readonly busiestSecond: (baseId: string) => number
  readonly close: () => Promise<void>
}

const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers })
  res.end(JSON.stringify(body))
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    let text = ""
    req.setEncoding("utf8")
    req.on("data", (chunk: string) => (text += chunk))
    req.on("end", () => resolve(text))
    req.on("error", reject)
  })

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The most times in any window of `span` ms. */
export const busiest = (times: ReadonlyArray<number>, span = 1_000): number => {
  const sorted = [...times].sort((a, b) => a - b)
  let most = 0
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= span) j++
    most = Math.max(most, i - j + 1)
  }
  return most
}

/** The listing parameters of a GET's query string (`sort[0][field]`, `fields[]`, ...). */
const listParamsOfQuery = (query: URLSearchParams): ListParams => {
  const sort: Array<{ field: string; direction: string }> = []
  for (const [key, value] of query) {
    const match = /^sort\[(\d+)\]\[(field|direction)\]$/.exec(key)
    if (match === null) continue
    const entry = (sort[Number(match[1])] ??= { field: "", direction: "asc" })
    entry[match[2] as "field" | "direction"] = value
  }
  const fields = query.getAll("fields[]")
  return listParams({
    filterByFormula: query.get("filterByFormula") ?? undefined,
    sort: sort.filter((s) => s !== undefined),
    fields: fields.length === 0 ? undefined : fields,
    pageSize: query.get("pageSize") ?? undefined,
    maxRecords: query.get("maxRecords") ?? undefined,
    offset: query.get("offset") ?? undefined,
    view: query.get("view") ?? undefined,
    cellFormat: query.get("cellFormat") ?? undefined,
    returnFieldsByFieldId: query.get("returnFieldsByFieldId") ?? undefined
  })
}

const listParams = (given: Record<string, unknown>): ListParams => {
  const number = (value: unknown) => (value === undefined ? undefined : Number(value))
  if (given.cellFormat !== undefined && given.cellFormat !== "json") {
    throw invalidRequest("Invalid request: the stand-in answers cellFormat json only.")
  }
  const sort = given.sort ?? []
  if (!Array.isArray(sort) || !sort.every((s) => isObject(s) && typeof s.field === "string")) throw invalidRequest()
  const fields = given.fields
  if (fields !== undefined && (!Array.isArray(fields) || !fields.every((f) => typeof f === "string"))) {
    throw invalidRequest()
  }
  const maxRecords = number(given.maxRecords)
  if (maxRecords !== undefined && (!Number.isInteger(maxRecords) || maxRecords < 1)) throw invalidRequest()
  return {
    filterByFormula: typeof given.filterByFormula === "string" ? given.filterByFormula : undefined,
    sort: sort.map((s: { field: string; direction?: unknown }) => ({
      field: s.field,
      direction: String(s.direction ?? "asc")
    })),
    fields,
    pageSize: number(given.pageSize) ?? 100,
    maxRecords,
    offset: typeof given.offset === "string" ? given.offset : undefined,
    view: typeof given.view === "string" ? given.view : undefined,
    returnFieldsByFieldId: given.returnFieldsByFieldId === true || given.returnFieldsByFieldId === "true"
  }
}

const tooManyRecords = (update: boolean) =>
  apiError(
    422,
    "INVALID_RECORDS",
    update
      ? 'You must provide an array of up to 10 record objects, each with an "id" ID field and a "fields" object for cell values.'
      : 'You must provide an array of up to 10 record objects, each with a "fields" object for cell values.'
  )

/** The records of a batch write, 1 to 10 of them, each with `fields` (and `id` for an update). */
const batchOf = (body: Record<string, unknown>, update: boolean): Array<RecordWrite> => {
  const records = body.records
  if (!Array.isArray(records) || records.length === 0 || records.length > 10) throw tooManyRecords(update)
  return records.map((record: unknown) => {
    if (!isObject(record) || !isObject(record.fields) || (update && typeof record.id !== "string")) {
      throw tooManyRecords(update)
    }
    return { id: update ? (record.id as string) : undefined, fields: record.fields }
  })
}

export const startAirtableStandIn = async (options: StandInOptions): Promise<AirtableStandIn> => {
  const now = options.now ?? Date.now
  const data = new Bases(options.collaborators ?? [], now)
  for (const [baseId, tables] of Object.entries(options.bases ?? {})) {
    data.bases.set(baseId, new Map())
    for (const [key, seed] of Object.entries(tables)) {
      const fields = seed.fields.map((f) => (typeof f === "string" ? { name: f, type: "singleLineText" } : f))
      // Seeded under a table id, the table keeps that id.
      const isId = /^tbl[A-Za-z0-9]{14}$/.test(key)
      const model = data.createTable(baseId, { name: seed.name ?? key, fields }, isId ? key : undefined)
      const seeded = data.bases.get(baseId)!.get(model.id)!
      for (const [id, values] of Object.entries(seed.records ?? {})) {
        seeded.records.set(id, { id, createdTime: new Date(now()).toISOString(), fields: { ...values } })
      }
    }
  }
  const perSecond = options.rateLimit?.perSecond ?? 5
  const penaltyMs = options.rateLimit?.penaltyMs ?? 30_000
  const requests: Array<StandInRequest> = []
  const failNext: AirtableStandIn["failNext"] = []
  const timesOf = (baseId: string) => requests.filter((r) => r.baseId === baseId).map((r) => r.at)
  const servedAt = new Map<string, Array<number>>()
  const blockedUntil = new Map<string, number>()

  /** Whether this request to the base is one too many: more than `perSecond` in a second, or within a penalty. */
  const overLimit = (baseId: string, at: number) => {
    if ((blockedUntil.get(baseId) ?? 0) > at) return true
    const recent = (servedAt.get(baseId) ?? []).filter((t) => at - t < 1_000)
    if (recent.length >= perSecond) {
      blockedUntil.set(baseId, at + penaltyMs)
      return true
    }
    servedAt.set(baseId, [...recent, at])
    return false
  }

  const route = (method: string, segments: ReadonlyArray<string>, query: URLSearchParams, body: unknown) => {
    const object = isObject(body) ? body : {}
    if (segments[0] === "meta" && segments[1] === "bases") {
      const [, , baseId, tables, tableId, fields] = segments
      if (baseId === undefined && method === "GET") {
        return { bases: [...data.bases.keys()].map((id) => ({ id, name: id, permissionLevel: "create" })) }
      }
      if (baseId === undefined || tables !== "tables") throw notFound()
      if (tableId === undefined && method === "GET" && segments.length === 4) {
        return { tables: [...data.base(baseId).values()].map((t) => data.tableModel(t)) }
      }
      if (tableId === undefined && method === "POST") return data.createTable(baseId, body)
      if (tableId !== undefined && fields === "fields" && segments.length === 6 && method === "POST") {
        return data.createField(baseId, tableId, body)
      }
      throw notFound()
    }
    const [baseId, tableKey, recordId, extra] = segments
    if (baseId === undefined || tableKey === undefined || extra !== undefined) throw notFound()
    const table = data.table(baseId, tableKey)
    const typecast = object.typecast === true
    if (recordId === "listRecords" && method === "POST") return data.list(table, listParams(object))
    if (recordId === undefined) {
      switch (method) {
        case "GET":
          return data.list(table, listParamsOfQuery(query))
        case "POST":
          if (isObject(object.fields) && object.records === undefined) {
            return data.write(table, [{ fields: object.fields }], typecast)[0]
          }
          return { records: data.write(table, batchOf(object, false), typecast) }
        case "PATCH":
        case "PUT":
          return { records: data.write(table, batchOf(object, true), typecast, method === "PUT") }
        case "DELETE": {
          const ids = query.getAll("records[]")
          if (ids.length === 0 || ids.length > 10) {
            throw apiError(422, "INVALID_RECORDS", "You must provide an array of up to 10 record ids.")
          }
          return { records: data.delete(table, ids) }
        }
      }
      throw notFound()
    }
    switch (method) {
      case "GET":
        return data.get(table, recordId)
      case "PATCH":
      case "PUT":
        if (!isObject(object.fields)) throw invalidRequest()
        return data.write(table, [{ id: recordId, fields: object.fields }], typecast, method === "PUT")[0]
      case "DELETE":
        return data.delete(table, [recordId])[0]
    }
    throw notFound()
  }

  const server = createServer(async (req, res) => {
    const text = await readBody(req)
    let body: unknown = undefined
    try {
      body = text === "" ? undefined : JSON.parse(text)
    } catch {
      body = text
    }
    const url = new URL(req.url ?? "/", "http://stand-in")
    const method = req.method ?? "GET"
    const versioned = url.pathname.startsWith("/v0/")
    let parts: Array<string> = []
    try {
      parts = versioned ? url.pathname.slice(4).split("/").map(decodeURIComponent) : []
    } catch {
      parts = []
    }
    // A trailing slash names the same resource (the official client writes `/{table}/`).
    if (parts.length > 2 && parts.at(-1) === "") parts.pop()
    const baseId = parts[0] === "meta" ? parts[2] : parts[0]
    const request: StandInRequest = {
      method,
      path: url.pathname,
      query: url.search,
      authorization: req.headers.authorization,
      body,
      baseId: baseId === "" ? undefined : baseId,
      at: now(),
      status: 0
    }
    requests.push(request)
    const reply = (status: number, answer: unknown, headers: Record<string, string> = {}) => {
      request.status = status
      send(res, status, answer, headers)
    }
    try {
      const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")
      if (auth === null || !options.tokens.includes(auth[1]!)) throw authenticationRequired()
      if (request.baseId !== undefined && overLimit(request.baseId, request.at)) throw rateLimited()
      const fault = failNext.shift()
      if (fault?.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, fault.delayMs))
      if (fault?.status === 0) {
        req.socket.destroy()
        return
      }
      if (fault !== undefined && fault.status !== 200) {
        throw new ApiError(
          fault.status,
          { error: { type: fault.type ?? "RETRIABLE_ERROR", message: "Injected failure" } },
          fault.retryAfter === undefined ? {} : { "retry-after": fault.retryAfter }
        )
      }
      if (parts.length === 0) throw notFound()
      if (method !== "GET" && method !== "DELETE" && body !== undefined && !isObject(body)) throw invalidRequest()
      reply(200, route(method, parts, url.searchParams, body))
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      reply(error.status, error.body, { ...error.headers })
    }
  })

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://${options.host ?? "127.0.0.1"}:${port}`,
    bases: data.bases,
    table: (baseId, idOrName) => data.table(baseId, idOrName),
    requests,
    failNext,
    busiestSecond: (baseId) => busiest(timesOf(baseId)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** A fresh base id, for a stand-in started without one. */
export const newBaseId = () => newId("app")
