import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * Sign-in links asked for and bound to the asking browser (docs/sign-in.md).
 *
 * - `sign_in_requests`: every request for an emailed link, known address or not, written by the request and
 *   taken (deleted) by the worker that decides whether to send a link; `browser_hash` is the hash of the
 *   asking browser's nonce.
 * - `sign_in_tokens.browser_hash`: the nonce hash of the browser that asked for an emailed link (null for a
 *   viewer link); opened in that browser the link signs in at once, elsewhere it asks first.
 * - `sign_in_tokens_by_user_created`: counting the links a person was sent in the last hour.
 */
export const signInRequestsMigration: Migration = {
  id: 12,
  name: "sign_in_requests",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE hub.sign_in_requests (
      id text COLLATE "C" PRIMARY KEY,
      email text NOT NULL,
      next text NULL,
      browser_hash text COLLATE "C" NOT NULL,
      created_at timestamptz NOT NULL
    )`
    yield* sql`ALTER TABLE hub.sign_in_tokens ADD COLUMN browser_hash text COLLATE "C" NULL`
    yield* sql`CREATE INDEX sign_in_tokens_by_user_created ON hub.sign_in_tokens (user_id, purpose, created_at)`
  })
}
