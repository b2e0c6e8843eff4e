import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { RoleStore, type RoleWithHolders } from "../../../core/decisions/RoleStore.ts"
import { makeCredentialCache } from "../CredentialCache.ts"
import { CredentialNoticesSql } from "../CredentialNotices.ts"
import { RoleStoreSql } from "./RoleStoreSql.ts"

interface Kept {
  readonly id: string
  readonly state: RoleWithHolders
}

const roleId = (organizationId: string, slug: string) => `${organizationId}\n${slug}`

/**
 * RoleStoreSql with each role and its holders, as a decision's creation reads them, kept per instance, so a
 * create reads no role row. Kept as the credential caches are (CredentialCache.ts), and answered inside units
 * of work too (`inUnits`), since every create runs in one:
 * - every change of a role or of its holders (update, archive, assign, unassign) announces itself in the
 *   transaction that makes it, so every instance drops the role when the change commits; until then the
 *   other units see the role as committed, as they would reading it;
 * - the unit that made the change reads the role itself until the change is heard, so it sees its change;
 * - nothing is answered from the cache while notices may be missed, and a missing role is never kept, so a
 *   role created elsewhere is found at once (creating a role changes nothing that was kept).
 * Only `getWithHolders` uses the cache: the admin pages read the rows.
 */
export const RoleStoreWithCacheSql: Layer.Layer<RoleStore, never, SqlClient.SqlClient> = Layer.effect(
  RoleStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const stored = yield* RoleStore
    const cache = yield* makeCredentialCache<Kept>({ scope: "decisions.roles", idOf: (kept) => kept.id, inUnits: true })

    // The change and its notice commit together.
    const announcing = <A>(change: Effect.Effect<A>, changed: (result: A) => boolean, id: string) =>
      sql
        .withTransaction(Effect.tap(change, (result) => (changed(result) ? cache.changed(id) : Effect.void)))
        .pipe(Effect.orDie)

    return RoleStore.of({
      ...stored,
      update: (organizationId, slug, patch) =>
        announcing(
          stored.update(organizationId, slug, patch),
          (role) => role !== undefined,
          roleId(organizationId, slug)
        ),
      archive: (organizationId, slug, at) =>
        announcing(
          stored.archive(organizationId, slug, at),
          (role) => role !== undefined,
          roleId(organizationId, slug)
        ),
      assign: (organizationId, slug, assignment) =>
        announcing(stored.assign(organizationId, slug, assignment), () => true, roleId(organizationId, slug)),
      unassign: (organizationId, slug, email) =>
        announcing(stored.unassign(organizationId, slug, email), (removed) => removed, roleId(organizationId, slug)),
      // The read is built only when the cache misses.
      getWithHolders: (organizationId, slug) => {
        const id = roleId(organizationId, slug)
        return Effect.map(
          cache.get(
            id,
            Effect.suspend(() =>
              Effect.map(stored.getWithHolders(organizationId, slug), (state) =>
                state === undefined ? undefined : { id, state }
              )
            )
          ),
          (kept) => kept?.state
        )
      }
    })
  })
).pipe(Layer.provide(Layer.merge(RoleStoreSql, CredentialNoticesSql)))
