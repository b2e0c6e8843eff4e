import { Clock, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { matches } from "../../../core/tasks/Query.ts"
import { formatRecordId, RecordStore, type StoredRecord, type Table } from "../../../core/tasks/RecordStore.ts"

/**
 * The record store in maps, one per table; every operation is synchronous, so each is atomic. Records are
 * copied in and out (as JSON), so callers never share state with the store, as with a real upstream.
 */
export const RecordStoreMemory = Layer.sync(RecordStore, () => {
  const tables = new Map<Table, Map<string, StoredRecord>>()
  const table = (name: Table) => {
    let rows = tables.get(name)
    if (rows === undefined) tables.set(name, (rows = new Map()))
    return rows
  }
  const copy = (record: StoredRecord): StoredRecord => JSON.parse(JSON.stringify(record))
  return RecordStore.of({
    create: (name, fields) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const rows = table(name)
        let id = formatRecordId(name, randomBytes(14))
        while (rows.has(id)) id = formatRecordId(name, randomBytes(14))
        const record = copy({ id, createdAt: new Date(now).toISOString(), fields })
        rows.set(id, record)
        return copy(record)
      }),
    get: (name, id) =>
      Effect.sync(() => {
        const record = table(name).get(id)
        return record === undefined ? undefined : copy(record)
      }),
    update: (name, id, fields) =>
      Effect.sync(() => {
        const rows = table(name)
        const record = rows.get(id)
        if (record === undefined) return undefined
        const next = copy({ ...record, fields: { ...record.fields, ...fields } })
        rows.set(id, next)
        return copy(next)
      }),
    select: (name, query, options) =>
      Effect.sync(() => {
        const predicate = matches(query)
        // Newest first: insertion order, reversed.
        const found = [...table(name).values()].reverse().filter((r) => predicate(r.fields))
        return (options?.limit === undefined ? found : found.slice(0, options.limit)).map(copy)
      })
  })
})
