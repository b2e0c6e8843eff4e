import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { writeBehind } from "../../adapters/sql/units/HeldWrites.ts"

/**
 * A table of its own per test, for the tests of units of work: `v` must not be negative, so one bad row makes its
 * statement fail. `insertHeld` holds its insert until the unit's end (`writeBehind`); `transaction` is the id of
 * the transaction the caller runs in.
 */
export const freshTable = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const name = `held_${randomBytes(6).toString("hex")}`
  yield* sql`CREATE TABLE ${sql(name)} (id text PRIMARY KEY, v integer NOT NULL CHECK (v >= 0))`
  const ids = Effect.map(sql<{ readonly id: string }>`SELECT id FROM ${sql(name)} ORDER BY id`, (rows) =>
    rows.map((row) => row.id)
  )
  const insertNow = (id: string, v = 1) => sql`INSERT INTO ${sql(name)} (id, v) VALUES (${id}, ${v})`
  const insertHeld = (id: string, v = 1) => writeBehind(sql, insertNow(id, v))
  const transaction = Effect.map(sql<{ readonly t: string }>`SELECT txid_current()::text AS t`, (rows) => rows[0]!.t)
  return { ids, insertNow, insertHeld, transaction, sql, name }
})
