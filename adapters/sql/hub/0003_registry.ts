import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * The service registry (core/hub/ServiceStore.ts): one row per service id. `doc` is the RegisteredService;
 * `version` is copied out of it so `save` can be one conditional UPDATE. The three credentials are stored
 * sealed (core/auth/SecretBox.ts), never in the clear.
 */
export const registryTable: Migration = {
  id: 3,
  name: "registry",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE hub.services (
      id text COLLATE "C" PRIMARY KEY,
      version integer NOT NULL,
      doc jsonb NOT NULL,
      sealed_api_key text NOT NULL,
      sealed_signing_key text NOT NULL,
      sealed_embed_key text NOT NULL
    )`
  })
}
