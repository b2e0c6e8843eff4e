import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { firstPartyUrlPattern } from "../../../core/hub/FirstPartyCatalog.ts"
import type { Migration } from "../Migrator.ts"

/** The first-party notification schemas' `url` pattern as it was seeded before patterns ran on RE2. */
const lookAheadUrlPattern = "^/(?![/\\\\])"

/**
 * Catalog patterns run on RE2, which has no look-ahead: the first-party notification types seeded before
 * that carry the same rule written without it (a new version, so validators compile again). Types an
 * operator wrote are left as they are; one RE2 cannot run refuses its events until it is replaced.
 */
export const catalogPatternsMigration: Migration = {
  id: 10,
  name: "catalog_patterns",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE hub.event_catalog
      SET data_schema = jsonb_set(data_schema, '{properties,url,pattern}', to_jsonb(${firstPartyUrlPattern}::text)),
        version = version + 1
      WHERE type IN ('decisions.notification.created', 'tasks.notification.created')
        AND data_schema #>> '{properties,url,pattern}' = ${lookAheadUrlPattern}`
  })
}
