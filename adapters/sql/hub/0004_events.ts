import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * The event catalog and the accepted events.
 *
 * - `event_catalog`: one row per type (core/hub/CatalogStore.ts); `version` is bumped by every upsert.
 * - `events`: acceptance is this row, keyed by (service, id), inserted before the 202. `lease_until` is
 *   the end of a processor's claim; `occurred_at` is kept as the producer wrote it.
 */
export const eventsMigration: Migration = {
  id: 4,
  name: "events",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE hub.event_catalog (
      type text COLLATE "C" PRIMARY KEY,
      producer text COLLATE "C" NOT NULL,
      is_notification boolean NOT NULL,
      data_schema jsonb NOT NULL,
      version integer NOT NULL,
      updated_at timestamptz NOT NULL
    )`
    yield* sql`CREATE INDEX event_catalog_producer ON hub.event_catalog (producer, type)`
    yield* sql`CREATE TABLE hub.events (
      service text COLLATE "C" NOT NULL,
      id text COLLATE "C" NOT NULL,
      type text NOT NULL,
      occurred_at text NOT NULL,
      subject_email text NOT NULL,
      subject_company_id text NULL,
      data jsonb NOT NULL,
      delivery_id text NOT NULL,
      received_at timestamptz NOT NULL,
      status text NOT NULL CHECK (status IN ('accepted', 'processed', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      lease_until timestamptz NULL,
      processed_at timestamptz NULL,
      PRIMARY KEY (service, id)
    )`
    yield* sql`CREATE INDEX events_due ON hub.events (received_at, id) WHERE status = 'accepted'`
    yield* sql`CREATE INDEX events_newest ON hub.events (service, received_at DESC, id DESC)`
  })
}
