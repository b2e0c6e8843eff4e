import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * The hub's audit of recording access changes it forwarded for the onboarding portal (docs/hub.md,
 * service-data plane): who asked (the calling service and the person), when, what, and the outcome.
 */
export const recordingGrantsMigration: Migration = {
  id: 15,
  name: "recording_grants",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE hub.recording_grants (
      id text COLLATE "C" PRIMARY KEY,
      caller text NOT NULL,
      recording_id text COLLATE "C" NOT NULL,
      email text NOT NULL,
      granted_by_email text NOT NULL,
      action text NOT NULL CHECK (action IN ('grant', 'revoke')),
      outcome text NOT NULL CHECK (outcome IN ('applied')),
      at timestamptz NOT NULL
    )`
    yield* sql`CREATE INDEX recording_grants_by_recording ON hub.recording_grants (recording_id, at, id)`
  })
}
