import { Effect } from "effect"
import * as Q from "../../core/tasks/Query.ts"
import type { StoredRecord, Table } from "../../core/tasks/RecordStore.ts"
import type { AirtableFailure } from "./AirtableClient.ts"
import { compileFormula } from "./AirtableFormula.ts"
import { Page, RawRecord, type RecordCodec, type SendToBase } from "./AirtableRecords.ts"

/**
 * Reading records from the base: records by id (one GET, or several in one list by `RECORD_ID()`), and
 * selections, whose query compiles to `filterByFormula` (AirtableFormula.ts), sorted newest first on the
 * `Created At` field the store writes, 100 records a page, following `offset`. The records read are filtered
 * again with the query, so a part the formula cannot express never answers a wrong record.
 */
export const makeAirtableSelection = (send: SendToBase, codec: RecordCodec) => {
  const { specs, specOf, managed, pathOf, decode, fieldParams } = codec
  const notFound = (failure: AirtableFailure) => failure.status === 404

  /** The records of `ids` (Airtable's ids), in their order: undefined for one that is not there. */
  const getMany = (table: Table, ids: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      if (ids.length === 1) {
        const one = yield* send({ method: "GET", path: pathOf(table, ids[0]!), idempotent: true }, RawRecord).pipe(
          Effect.map((raw) => decode(table, raw)),
          Effect.catchIf(notFound, () => Effect.succeed(undefined))
        )
        return [one]
      }
      const formula = `OR(${ids.map((id) => `RECORD_ID()='${id}'`).join(",")})`
      const page = yield* send(
        {
          method: "GET",
          path: pathOf(table),
          urlParams: [["filterByFormula", formula], ["pageSize", "100"], ...fieldParams(table)],
          idempotent: true
        },
        Page
      )
      const byId = new Map(page.records.map((raw) => [raw.id, decode(table, raw)] as const))
      return ids.map((id) => byId.get(id))
    })

  const select = (table: Table, query: Q.Query, limit: number | undefined) =>
    Effect.gen(function* () {
      const spec = specOf(table)
      const compiled = compileFormula(specs, table, query)
      const matches = Q.matches(query)
      const created = managed(spec, "createdAt")
      const base: Array<readonly [string, string]> = [["pageSize", "100"], ...fieldParams(table)]
      if (compiled.formula !== undefined) base.push(["filterByFormula", compiled.formula])
      if (created !== undefined) base.push(["sort[0][field]", created.name], ["sort[0][direction]", "desc"])
      if (compiled.exact && limit !== undefined) base.push(["maxRecords", String(limit)])
      const found: Array<StoredRecord> = []
      let offset: string | undefined = undefined
      do {
        const page: typeof Page.Type = yield* send(
          {
            method: "GET",
            path: pathOf(table),
            urlParams: offset === undefined ? base : [...base, ["offset", offset]],
            idempotent: true
          },
          Page
        )
        for (const raw of page.records) {
          const record = decode(table, raw)
          if (matches(record.fields)) found.push(record)
        }
        offset = page.offset
      } while (offset !== undefined && (limit === undefined || found.length < limit))
      return limit === undefined ? found : found.slice(0, limit)
    })

  return { getMany, select }
}
