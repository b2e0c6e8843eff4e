import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * Signing people in at the hub (docs/sign-in.md).
 *
 * - `sessions`: server-side web sessions by the hash of the cookie's secret; `id` is the public name. A
 *   session ends when idle too long (`last_seen_at`) or at `expires_at`, whichever is first.
 * - `sign_in_tokens`: the single-use secrets of sign-in links (an emailed link, or a viewer link), by hash;
 *   `used_at` is set by the one request that redeems it. `next` is where the person lands.
 * - `external_viewers`: directory users the meeting-recaps service invited to view a recording.
 * - `mail_outbox`: every email the hub sends, written in the unit of work that decides to send it and
 *   delivered by a worker. `sealed` is the message sealed with the hub's secrets key (it may hold a sign-in
 *   link), cleared once the message is sent or given up.
 */
export const signInMigration: Migration = {
  id: 6,
  name: "sign_in",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE hub.sessions (
      id_hash text COLLATE "C" PRIMARY KEY,
      id text COLLATE "C" NOT NULL UNIQUE,
      user_id text COLLATE "C" NOT NULL,
      created_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    )`
    yield* sql`CREATE INDEX sessions_by_user ON hub.sessions (user_id)`
    yield* sql`CREATE INDEX sessions_by_last_seen ON hub.sessions (last_seen_at)`
    yield* sql`CREATE TABLE hub.sign_in_tokens (
      token_hash text COLLATE "C" PRIMARY KEY,
      user_id text COLLATE "C" NOT NULL,
      purpose text COLLATE "C" NOT NULL CHECK (purpose IN ('email', 'viewer')),
      next text NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz NULL
    )`
    yield* sql`CREATE INDEX sign_in_tokens_unused ON hub.sign_in_tokens (user_id, purpose) WHERE used_at IS NULL`
    yield* sql`CREATE INDEX sign_in_tokens_by_expiry ON hub.sign_in_tokens (expires_at)`
    yield* sql`CREATE TABLE hub.external_viewers (
      user_id text COLLATE "C" PRIMARY KEY,
      invited_by_email text NOT NULL,
      created_at timestamptz NOT NULL
    )`
    yield* sql`CREATE TABLE hub.mail_outbox (
      id text COLLATE "C" PRIMARY KEY,
      sealed text NULL,
      created_at timestamptz NOT NULL,
      next_attempt_at timestamptz NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      lease_until timestamptz NULL,
      sent_at timestamptz NULL,
      failed_at timestamptz NULL
    )`
    yield* sql`CREATE INDEX mail_outbox_due ON hub.mail_outbox (next_attempt_at)
      WHERE sent_at IS NULL AND failed_at IS NULL`
  })
}
