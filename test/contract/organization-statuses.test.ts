import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { CredentialNotices, CredentialNoticesSql } from "../../adapters/sql/CredentialNotices.ts"
import type { DatabaseServices } from "../../adapters/sql/Database.ts"
import { decisionsMigrations } from "../../adapters/sql/decisions/migrations.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { tasksMigrations } from "../../adapters/sql/tasks/migrations.ts"
import { OrganizationStatuses } from "../../core/events/OrganizationStatuses.ts"
import { acknowledgement, instanceOn, statementsOf, twoWaysIn } from "../support/TwoInstances.ts"
import { OrganizationStatusesMemory } from "../../adapters/memory/OrganizationStatusesMemory.ts"
import { OrganizationStatusesSql } from "../../adapters/sql/OrganizationStatusesSql.ts"
import { sqlBackends } from "../support/Databases.ts"
import { decisionsSqlOn } from "./decisions-sql-layers.ts"
import { OrganizationStatusesContract } from "./OrganizationStatuses.contract.ts"
import { tasksSqlOn } from "./tasks-sql-layers.ts"

// One port for both consumers of the fact: in memory, and over each service's own tables on both databases.
OrganizationStatusesContract("memory", OrganizationStatusesMemory)
for (const backend of sqlBackends) {
  OrganizationStatusesContract(
    `decisions, ${backend.name}`,
    decisionsSqlOn(OrganizationStatusesSql("decisions"), backend)
  )
  OrganizationStatusesContract(`tasks, ${backend.name}`, tasksSqlOn(OrganizationStatusesSql("tasks"), backend))
}

const migrations = Layer.merge(
  migrationsLayer("decisions", decisionsMigrations),
  migrationsLayer("tasks", tasksMigrations)
)

const instance = (schema: string, database: Context.Context<DatabaseServices>) =>
  Effect.map(instanceOn(Layer.merge(OrganizationStatusesSql(schema), CredentialNoticesSql), database), (context) => ({
    statuses: Context.get(context, OrganizationStatuses),
    notices: Context.get(context, CredentialNotices)
  }))

for (const backend of sqlBackends) {
  for (const schema of ["decisions", "tasks"]) {
    describe(`organization statuses across two instances (${schema}, ${backend.name})`, () => {
      it.live("an organization suspended on one instance is refused by the other at its next request", () =>
        Effect.scoped(
          Effect.gen(function* () {
            const { first, second } = yield* twoWaysIn(backend, migrations)
            const a = yield* instance(schema, first)
            const b = yield* instance(schema, second)
            const org = `org_${randomUUID()}`
            const email = `${randomUUID()}@example.com`
            assert.isFalse(yield* b.statuses.organizationSuspended(org))
            assert.isFalse(yield* b.statuses.personSuspended(email))
            const [, none] = yield* statementsOf(b.statuses.organizationSuspended(org))
            assert.deepStrictEqual(none, [], "a second request reads nothing")

            const orgHeard = yield* acknowledgement(b.notices, backend, {
              scope: `${schema}.organization_statuses`,
              id: org
            })
            const personHeard = yield* acknowledgement(b.notices, backend, {
              scope: `${schema}.organization_members`,
              id: email
            })
            const notice = {
              organizationId: org,
              email,
              status: "archived" as const,
              changedAt: "2030-01-01T10:00:00Z"
            }
            yield* a.statuses.record(notice)
            yield* orgHeard
            yield* personHeard
            assert.isTrue(yield* b.statuses.organizationSuspended(org))
            assert.isTrue(yield* b.statuses.personSuspended(email))
          })
        )
      )
    })
  }
}
