import { Clock, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { matches } from "../../../core/tasks/Query.ts"
import {
  formatRecordId,
  holdsExpected,
  RecordConflict,
  RecordStore,
  type Fields,
  type StoredRecord,
  type Table
} from "../../../core/tasks/RecordStore.ts"

/**
 * The record store in maps, one per table; every operation is synchronous, so each is atomic, a guarded
 * update with its following write included (checked and written in one step, nothing in between). Records
 * are copied in and out (as JSON), so callers never share state with the store, as with a real upstream.
 */
export const RecordStoreMemory = Layer.sync(RecordStore, () => {
  const tables = new Map<Table, Map<string, StoredRecord>>()
  const table = (name: Table) => {
    let rows = tables.get(name)
    if (rows === undefined) tables.set(name, (rows = new Map()))
    return rows
  }
  const copy = (record: StoredRecord): StoredRecord => JSON.parse(JSON.stringify(record))
  const insert = (name: Table, fields: Fields, now: number) => {
    const rows = table(name)
    let id = formatRecordId(name, randomBytes(14))
    while (rows.has(id)) id = formatRecordId(name, randomBytes(14))
    const record = copy({ id, createdAt: new Date(now).toISOString(), fields })
    rows.set(id, record)
    return copy(record)
  }
  const patch = (name: Table, id: string, fields: Fields) => {
    const rows = table(name)
    const record = rows.get(id)
    if (record === undefined) return undefined
    const next = copy({ ...record, fields: { ...record.fields, ...fields } })
    rows.set(id, next)
    return copy(next)
  }
  const create = (name: Table, fields: Fields) =>
    Effect.map(Clock.currentTimeMillis, (now) => insert(name, fields, now))
  return RecordStore.of({
    create,
    createUnread: create,
    // Memory units never share a transaction (TransactionsMemory runs `shared` as `atomically`).
    inUnits: true,
    get: (name, id) =>
      Effect.sync(() => {
        const record = table(name).get(id)
        return record === undefined ? undefined : copy(record)
      }),
    update: (name, id, fields) => Effect.sync(() => patch(name, id, fields)),
    updateIf: (update) =>
      Effect.suspend(() => {
        const record = table(update.table).get(update.id)
        if (record === undefined) return Effect.succeed(undefined)
        if (!holdsExpected(record.fields, update.expected)) {
          return Effect.fail(new RecordConflict({ table: update.table, id: update.id, fields: copy(record).fields }))
        }
        return Effect.succeed(patch(update.table, update.id, update.fields))
      }),
    updateIfAndWrite: (update, then) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const record = table(update.table).get(update.id)
        if (record === undefined) return Effect.succeed(undefined)
        if (!holdsExpected(record.fields, update.expected)) {
          return Effect.fail(new RecordConflict({ table: update.table, id: update.id, fields: copy(record).fields }))
        }
        if (then._tag === "Update" && !table(then.table).has(then.id)) return Effect.succeed(undefined)
        const written =
          then._tag === "Create"
            ? insert(then.table, { ...then.fields, [then.linkedBy]: [update.id] }, now)
            : patch(then.table, then.id, then.fields)!
        return Effect.succeed({ updated: patch(update.table, update.id, update.fields)!, written })
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
