import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * Answer links used (core/decisions/AnswerByLink.ts): one row per link's nonce, written in the transaction of
 * the answer it gave, so a link answers once on every instance. The primary key makes a second use of the
 * same link wait for the first and then find it.
 */
export const answerLinkUsesTable: Migration = {
  id: 14,
  name: "answer_link_uses",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE decisions.answer_link_uses (
      nonce text COLLATE "C" PRIMARY KEY,
      decision_id text COLLATE "C" NOT NULL,
      used_at timestamptz NOT NULL
    )`
  })
}
