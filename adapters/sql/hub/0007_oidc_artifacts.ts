import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * `hub.oidc_artifacts`: what the hub's OpenID provider must find again on any instance (authorization codes,
 * grants, interactions, its sessions, tokens). Keyed by the hash of the artifact's id, since an id such as an
 * authorization code is itself a credential; the payload is sealed with the hub's secrets key. `grant_id`
 * lets a grant's artifacts be revoked together; `consumed_at` marks a code already exchanged.
 */
export const oidcArtifactsTable: Migration = {
  id: 7,
  name: "oidc_artifacts",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE hub.oidc_artifacts (
      model text COLLATE "C" NOT NULL,
      id_hash text COLLATE "C" NOT NULL,
      payload text NOT NULL,
      grant_id text COLLATE "C" NULL,
      uid_hash text COLLATE "C" NULL,
      user_code_hash text COLLATE "C" NULL,
      expires_at timestamptz NULL,
      consumed_at timestamptz NULL,
      PRIMARY KEY (model, id_hash)
    )`
    yield* sql`CREATE INDEX oidc_artifacts_by_grant ON hub.oidc_artifacts (grant_id) WHERE grant_id IS NOT NULL`
    yield* sql`CREATE INDEX oidc_artifacts_by_uid ON hub.oidc_artifacts (model, uid_hash) WHERE uid_hash IS NOT NULL`
    yield* sql`CREATE INDEX oidc_artifacts_by_user_code ON hub.oidc_artifacts (model, user_code_hash)
      WHERE user_code_hash IS NOT NULL`
    yield* sql`CREATE INDEX oidc_artifacts_by_expiry ON hub.oidc_artifacts (expires_at) WHERE expires_at IS NOT NULL`
  })
}
