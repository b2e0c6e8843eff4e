import { Effect, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import type { Adapter, AdapterPayload } from "oidc-provider"
import { hashSecret } from "../../../core/auth/IssuedSecret.ts"
import { open, seal } from "../../../core/auth/SecretBox.ts"

const Row = Schema.Struct({ payload: Schema.String, consumed: Schema.NullOr(Schema.Number) })

/**
 * The storage of the hub's OpenID provider (`oidc-provider`'s adapter interface) over `hub.oidc_artifacts`
 * (0007_oidc_artifacts.ts), so codes, grants, interactions and the provider's sessions are the same on every
 * instance. Ids, uids and user codes are stored hashed; payloads sealed with the hub's secrets key (a payload
 * that does not open, e.g. after the key changed, is as if missing). An expired artifact is never found and is
 * deleted by `purgeExpired`. SQL failures reject the provider's call: its server error, answered 503 UNAVAILABLE
 * while the database cannot be reached (adapters/http/hub/OpenIdProvider.ts, `answerOutages`).
 */
export const oidcArtifactsSql = (secretsKey: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const context = yield* Effect.context<never>()
    const run = <A>(effect: Effect.Effect<A, unknown>) => Effect.runPromiseWith(context)(effect)

    const findWhere = SqlSchema.findOneOption({
      Request: Schema.Struct({
        model: Schema.String,
        column: Schema.Literals(["id", "uid", "user_code"]),
        hash: Schema.String
      }),
      Result: Row,
      execute: ({ model, column, hash }) => sql`
        SELECT payload, extract(epoch FROM consumed_at)::float8 AS consumed FROM hub.oidc_artifacts
        WHERE model = ${model}
          AND ${column === "id" ? sql`id_hash` : column === "uid" ? sql`uid_hash` : sql`user_code_hash`} = ${hash}
          AND (expires_at IS NULL OR expires_at > now())
        LIMIT 1`
    })

    const found = (model: string, column: "id" | "uid" | "user_code", value: string) =>
      run(
        Effect.map(findWhere({ model, column, hash: hashSecret(value) }), (row) => {
          if (row._tag === "None") return undefined
          const opened = open(secretsKey, row.value.payload)
          if (opened === undefined) return undefined
          const payload = JSON.parse(opened) as AdapterPayload
          return row.value.consumed === null ? payload : { ...payload, consumed: Math.floor(row.value.consumed) }
        })
      )

    const adapterFor = (model: string): Adapter => ({
      upsert: (id, payload, expiresIn) =>
        run(sql`
          INSERT INTO hub.oidc_artifacts (model, id_hash, payload, grant_id, uid_hash, user_code_hash, expires_at)
          VALUES (
            ${model}, ${hashSecret(id)}, ${seal(secretsKey, JSON.stringify(payload))}, ${payload.grantId ?? null},
            ${payload.uid === undefined ? null : hashSecret(payload.uid)},
            ${payload.userCode === undefined ? null : hashSecret(payload.userCode)},
            ${expiresIn !== undefined && expiresIn > 0 ? sql`now() + ${expiresIn} * interval '1 second'` : sql`NULL`}
          )
          ON CONFLICT (model, id_hash) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
            uid_hash = excluded.uid_hash, user_code_hash = excluded.user_code_hash, expires_at = excluded.expires_at`).then(
          () => undefined
        ),
      find: (id) => found(model, "id", id),
      findByUid: (uid) => found(model, "uid", uid),
      findByUserCode: (userCode) => found(model, "user_code", userCode),
      consume: (id) =>
        run(sql`
          UPDATE hub.oidc_artifacts SET consumed_at = now()
          WHERE model = ${model} AND id_hash = ${hashSecret(id)} AND consumed_at IS NULL`).then(() => undefined),
      destroy: (id) =>
        run(sql`DELETE FROM hub.oidc_artifacts WHERE model = ${model} AND id_hash = ${hashSecret(id)}`).then(
          () => undefined
        ),
      revokeByGrantId: (grantId) =>
        run(sql`DELETE FROM hub.oidc_artifacts WHERE grant_id = ${grantId}`).then(() => undefined)
    })

    /** Deletes what has expired; answers how many artifacts went. */
    const purgeExpired = Effect.map(
      sql<{ readonly id_hash: string }>`
        DELETE FROM hub.oidc_artifacts WHERE expires_at IS NOT NULL AND expires_at <= now() RETURNING id_hash`,
      (rows) => rows.length
    )

    return { adapterFor, purgeExpired }
  })
