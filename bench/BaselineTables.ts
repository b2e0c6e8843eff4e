/**
 * The table the raw baseline's decision create writes (bench/BaselineServer.ts), also written by the same
 * create on the bare stack (bench/EffectFloorServer.ts): one definition, so both do the same work. `schema`
 * must be a plain identifier (the callers check it or fix it).
 */
export const decisionsTable = (schema: string) => `CREATE TABLE IF NOT EXISTS ${schema}.decisions (
  id text COLLATE "C" PRIMARY KEY,
  organization_id text NOT NULL,
  role_slug text NOT NULL,
  status text NOT NULL,
  created_at timestamptz NOT NULL,
  doc jsonb NOT NULL
)`
