import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * The hub's own short links (docs/hub.md, service-data plane): a code and the address it redirects to. The
 * code is derived from the address, so the same address is written once whichever instance shortens it.
 */
export const shortLinksMigration: Migration = {
  id: 14,
  name: "short_links",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE hub.short_links (
      code text COLLATE "C" PRIMARY KEY,
      url text NOT NULL,
      created_at timestamptz NOT NULL
    )`
  })
}
