import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { CredentialNotices, CredentialNoticesSql } from "../../adapters/sql/CredentialNotices.ts"
import type { DatabaseServices } from "../../adapters/sql/Database.ts"
import { decisionsMigrations } from "../../adapters/sql/decisions/migrations.ts"
import { RoleStoreWithCacheSql } from "../../adapters/sql/decisions/RoleStoreWithCacheSql.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { RoleStore } from "../../core/decisions/RoleStore.ts"
import { type SqlBackend, sqlBackendsBothWays } from "../support/Databases.ts"
import { acknowledgement, instanceOn, statementsOf, twoWaysIn } from "../support/TwoInstances.ts"
import { decisionsSqlOn } from "./decisions-sql-layers.ts"
import { RoleStoreContract } from "./RoleStore.contract.ts"

/**
 * A decision role and its holders kept per instance: a kept role is read once, inside units of work too; a
 * change on one instance is what the other finds once the change has committed (on a Postgres server, once
 * its listener has acted on the notice); and a unit that changed a role reads its own change.
 */

const instanceLayer: Layer.Layer<RoleStore | CredentialNotices, never, DatabaseServices> = Layer.mergeAll(
  RoleStoreWithCacheSql,
  CredentialNoticesSql
)

const instance = (database: Context.Context<DatabaseServices>) =>
  Effect.map(instanceOn(instanceLayer, database), (context) => ({
    roles: Context.get(context, RoleStore),
    notices: Context.get(context, CredentialNotices),
    sql: Context.get(database, SqlClient.SqlClient)
  }))

/** Two instances over one fresh migrated database. */
const twoInstances = (backend: SqlBackend) =>
  Effect.gen(function* () {
    const { first, second } = yield* twoWaysIn(backend, migrationsLayer("decisions", decisionsMigrations))
    return { a: yield* instance(first), b: yield* instance(second) }
  })

const org = "org_cache"
const finance = {
  id: "r1",
  organizationId: org,
  slug: "finance",
  name: "Finance",
  createdAt: "2030-01-01T10:00:00.000Z"
}
const id = `${org}\nfinance`
const notice = { scope: "decisions.roles", id }
const holder = (memberEmail: string) => ({
  memberEmail,
  addedBy: "admin@example.com",
  addedAt: "2030-01-01T10:00:00.000Z"
})

for (const backend of sqlBackendsBothWays) {
  RoleStoreContract(`${backend.name}, kept`, decisionsSqlOn(RoleStoreWithCacheSql, backend))

  describe(`decision roles kept across two instances (${backend.name})`, () => {
    it.live("a kept role is read once, in a unit too; a change on one instance is what the other reads next", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { a, b } = yield* twoInstances(backend)

          // A missing role is never kept: it is found once it is created.
          assert.isUndefined(yield* b.roles.getWithHolders(org, "finance"))
          yield* a.roles.create(finance)
          const assigned = yield* acknowledgement(b.notices, backend, notice)
          yield* a.roles.assign(org, "finance", holder("ann@example.com"))
          yield* assigned

          const [found, read] = yield* statementsOf(b.roles.getWithHolders(org, "finance"))
          assert.deepStrictEqual(found?.holders, ["ann@example.com"])
          assert.lengthOf(read, 1, "the first lookup reads the role")
          const [again, none] = yield* statementsOf(b.roles.getWithHolders(org, "finance"))
          assert.deepStrictEqual(again, found)
          assert.deepStrictEqual(none, [], "the next lookup reads nothing")
          const [inUnit, noneInUnit] = yield* statementsOf(
            b.sql.withTransaction(b.roles.getWithHolders(org, "finance"))
          )
          assert.deepStrictEqual(inUnit, found)
          assert.isFalse(
            noneInUnit.some((s) => s.includes("decisions.roles")),
            "a unit reads no role either"
          )

          // Every kind of change reaches the other instance.
          const changes = [
            a.roles.assign(org, "finance", holder("bob@example.com")),
            a.roles.unassign(org, "finance", "ann@example.com"),
            a.roles.update(org, "finance", { name: "Money" }),
            a.roles.archive(org, "finance", "2030-01-02T10:00:00.000Z")
          ]
          for (const change of changes) {
            const heard = yield* acknowledgement(b.notices, backend, notice)
            yield* change
            yield* heard
            const kept = yield* b.roles.getWithHolders(org, "finance")
            assert.deepStrictEqual(kept, yield* a.sql.withTransaction(a.roles.getWithHolders(org, "finance")))
          }
          const last = yield* b.roles.getWithHolders(org, "finance")
          assert.deepStrictEqual(last?.holders, ["bob@example.com"])
          assert.strictEqual(last?.role.name, "Money")
          assert.strictEqual(last?.role.archivedAt, "2030-01-02T10:00:00.000Z")
        })
      )
    )

    it.live("a unit that changes a role reads its change, and one that rolls back leaves the kept role as it was", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { a, b } = yield* twoInstances(backend)
          yield* a.roles.create(finance)
          const before = yield* b.roles.getWithHolders(org, "finance")
          assert.deepStrictEqual(before?.holders, [])
          const [, none] = yield* statementsOf(b.roles.getWithHolders(org, "finance"))
          assert.deepStrictEqual(none, [], "kept")

          // In its own unit, after its change, the role is read, never answered from what was kept.
          const seen = yield* b.sql
            .withTransaction(
              Effect.gen(function* () {
                yield* b.roles.assign(org, "finance", holder("cyd@example.com"))
                const own = yield* b.roles.getWithHolders(org, "finance")
                return yield* Effect.fail({ own })
              })
            )
            .pipe(Effect.flip)
          assert.deepStrictEqual((seen as { own: { holders: ReadonlyArray<string> } }).own.holders, ["cyd@example.com"])

          // Rolled back: nothing changed, and the kept role still answers as committed.
          assert.deepStrictEqual((yield* b.roles.getWithHolders(org, "finance"))?.holders, [])
          assert.deepStrictEqual((yield* a.roles.getWithHolders(org, "finance"))?.holders, [])

          // Committed: every instance reads the change once it is heard.
          const heard = yield* acknowledgement(a.notices, backend, notice)
          const heardHere = yield* acknowledgement(b.notices, backend, notice)
          yield* b.sql.withTransaction(b.roles.assign(org, "finance", holder("dee@example.com")))
          yield* heard
          yield* heardHere
          assert.deepStrictEqual((yield* a.roles.getWithHolders(org, "finance"))?.holders, ["dee@example.com"])
          assert.deepStrictEqual((yield* b.roles.getWithHolders(org, "finance"))?.holders, ["dee@example.com"])
        })
      )
    )
  })
}
