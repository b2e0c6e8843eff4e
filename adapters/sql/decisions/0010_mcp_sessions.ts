import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * Agents' MCP sessions (core/decisions/McpSessionStore.ts): any instance serves any session. Keyed by the
 * hash of the session id; read by key and last use for a key's cap and for the idle purge.
 */
export const mcpSessionsTable: Migration = {
  id: 10,
  name: "mcp_sessions",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE decisions.mcp_sessions (
      id_hash text COLLATE "C" PRIMARY KEY,
      key_id text COLLATE "C" NOT NULL,
      protocol_version text NOT NULL,
      initialize jsonb NOT NULL,
      last_seen_at timestamptz NOT NULL
    )`
    yield* sql`CREATE INDEX mcp_sessions_key ON decisions.mcp_sessions (key_id, last_seen_at DESC)`
    yield* sql`CREATE INDEX mcp_sessions_last_seen ON decisions.mcp_sessions (last_seen_at)`
  })
}
