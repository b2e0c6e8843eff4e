import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import { OrganizationStatuses } from "../../core/events/OrganizationStatuses.ts"
import type { OrganizationStatus } from "../../core/kernel/Facts.ts"

const freshOrg = () => `org_${randomUUID()}`
const freshEmail = () => `${randomUUID()}@example.com`
const at = (minute: number) => new Date(Date.UTC(2030, 0, 1, 10, minute)).toISOString()

const notice = (organizationId: string, email: string, status: OrganizationStatus, minute: number) => ({
  organizationId,
  email,
  status,
  changedAt: at(minute)
})

/** The OrganizationStatuses port's contract (core/events/OrganizationStatuses.ts), run once per adapter. */
export const OrganizationStatusesContract = (name: string, store: Layer.Layer<OrganizationStatuses, unknown>) =>
  describe(`OrganizationStatuses contract (${name})`, () =>
    layer(store, { excludeTestServices: true })((it) => {
      it.effect("answers an organization and a person never heard of as not suspended", () =>
        Effect.gen(function* () {
          const statuses = yield* OrganizationStatuses
          assert.isFalse(yield* statuses.organizationSuspended(freshOrg()))
          assert.isFalse(yield* statuses.personSuspended(freshEmail()))
        })
      )

      it.effect("suspends an organization and its member while its status is not active, until it is again", () =>
        Effect.gen(function* () {
          const statuses = yield* OrganizationStatuses
          const org = freshOrg()
          const email = freshEmail()
          let minute = 0
          for (const status of ["archived", "merged", "deleted"] as const) {
            yield* statuses.record(notice(org, email, status, ++minute))
            assert.isTrue(yield* statuses.organizationSuspended(org), status)
            assert.isTrue(yield* statuses.personSuspended(email), status)
            yield* statuses.record(notice(org, email, "active", ++minute))
            assert.isFalse(yield* statuses.organizationSuspended(org), status)
            assert.isFalse(yield* statuses.personSuspended(email), status)
          }
        })
      )

      it.effect("keeps the newest status when facts arrive out of order", () =>
        Effect.gen(function* () {
          const statuses = yield* OrganizationStatuses
          const org = freshOrg()
          const email = freshEmail()
          yield* statuses.record(notice(org, email, "active", 5))
          yield* statuses.record(notice(org, email, "archived", 3))
          assert.isFalse(yield* statuses.organizationSuspended(org))
          yield* statuses.record(notice(org, email, "archived", 6))
          yield* statuses.record(notice(org, email, "active", 4))
          assert.isTrue(yield* statuses.organizationSuspended(org))
        })
      )

      it.effect("a member of every one of their organizations suspended is suspended; one active one is enough", () =>
        Effect.gen(function* () {
          const statuses = yield* OrganizationStatuses
          const first = freshOrg()
          const second = freshOrg()
          const email = freshEmail()
          const other = freshEmail()
          yield* statuses.record(notice(first, email, "archived", 1))
          yield* statuses.record(notice(second, email, "active", 1))
          assert.isFalse(yield* statuses.personSuspended(email))
          yield* statuses.record(notice(second, email, "merged", 2))
          assert.isTrue(yield* statuses.personSuspended(email))
          // Only the people heard of as members: a stranger to both is not.
          assert.isFalse(yield* statuses.personSuspended(other))
        })
      )

      it.effect("matches a person's address whatever its case or surrounding spaces", () =>
        Effect.gen(function* () {
          const statuses = yield* OrganizationStatuses
          const org = freshOrg()
          const email = freshEmail()
          yield* statuses.record(notice(org, `  ${email.toUpperCase()} `, "archived", 1))
          assert.isTrue(yield* statuses.personSuspended(email))
          assert.isTrue(yield* statuses.personSuspended(email.toUpperCase()))
        })
      )
    }))
