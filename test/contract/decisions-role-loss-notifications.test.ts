import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { CallerAuthentication } from "../../core/decisions/CallerAuthentication.ts"
import { Decisions, type CallerIdentity, type WorkspaceUser } from "../../core/decisions/Decisions.ts"
import { OrganizationAdmins } from "../../core/decisions/OrganizationAdmins.ts"
import { ProducerOutbox, type ProducerEvent } from "../../core/events/ProducerOutbox.ts"
import { isoAt } from "../../core/kernel/Timestamp.ts"
import { Transactions } from "../../core/kernel/Transactions.ts"
import { sqlBackends } from "../support/Databases.ts"
import { DecisionsMemory } from "../support/DecisionsMemory.ts"
import { decisionsSqlOn } from "../support/DecisionsSql.ts"

/**
 * Archiving a role, or removing its last holder, leaves its open decisions with nobody to act on them: the
 * organization's admins hear of each (`decision_unrouted`), in the same unit of work as the change, and a
 * repeat adds nothing. On the memory adapters and on the SQL ones (PGlite, and Postgres when configured).
 */

const admin: WorkspaceUser = { organizationId: "acme", email: "carol@acme.test", isAdmin: true }

const unroutedOf = (events: ReadonlyArray<ProducerEvent>) =>
  events
    .filter((e) => e.data["category"] === "decision_unrouted")
    .map((e) => ({ to: e.subject.email, url: e.data["url"], org: e.subject.companyId, id: e.id }))

const suite = (
  name: string,
  layer: Layer.Layer<Decisions | CallerAuthentication | ProducerOutbox | OrganizationAdmins | Transactions>,
  /** The memory adapters cannot undo a unit's writes (they die with their process instead). */
  undoes: boolean
) =>
  describe(`decisions tell admins of decisions a role change left with nobody (${name})`, () => {
    const setUp = Effect.gen(function* () {
      const decisions = yield* Decisions
      const admins = yield* OrganizationAdmins
      yield* admins.note("acme", admin.email, true, isoAt(Date.now()))
      yield* admins.note("acme", "dan@acme.test", true, isoAt(Date.now()))
      for (const slug of ["finance", "legal"]) yield* decisions.createRole(admin, { slug, name: slug })
      yield* decisions.assign(admin, "finance", "ann@acme.test")
      yield* decisions.assign(admin, "finance", "bob@acme.test")
      yield* decisions.assign(admin, "legal", "lee@acme.test")
      const key = yield* decisions.createKey(admin, "agent")
      const caller = (yield* (yield* CallerAuthentication).authenticate(key.plaintext)) as CallerIdentity
      const ask = (title: string, roleSlug: string, extra: { directAssigneeEmail?: string } = {}) =>
        Effect.map(
          decisions.create(caller, { title, roleSlug, options: [{ label: "Yes" }, { label: "No" }], ...extra }),
          (view) => view.decision.id
        )
      return { decisions, ask, caller }
    })

    it.effect(
      "removing the last holder tells each admin of each open decision of the role, once",
      () =>
        Effect.gen(function* () {
          const { decisions, ask, caller } = yield* setUp
          const outbox = yield* ProducerOutbox
          const open = yield* ask("Refund 42?", "finance")
          const direct = yield* ask("Refund 43?", "finance", { directAssigneeEmail: "zed@acme.test" })
          const other = yield* ask("Contract?", "legal")
          const closed = yield* ask("Refund 44?", "finance")
          yield* decisions.cancel(caller, closed)
          const before = unroutedOf(yield* outbox.pending(1000))
          assert.deepStrictEqual(before, [])

          // One holder left: still routed, nobody told.
          yield* decisions.unassign(admin, "finance", "ann@acme.test")
          assert.deepStrictEqual(unroutedOf(yield* outbox.pending(1000)), [])

          // The last one: the open decision without a direct assignee goes to both admins.
          yield* decisions.unassign(admin, "finance", "bob@acme.test")
          const told = unroutedOf(yield* outbox.pending(1000))
          assert.sameDeepMembers(
            told.map(({ to, url, org }) => ({ to, url, org })),
            ["carol@acme.test", "dan@acme.test"].map((to) => ({
              to,
              url: `/apps/decisions/decision-${open}`,
              org: "acme"
            }))
          )
          assert.notInclude(
            told.map((t) => t.url),
            `/apps/decisions/decision-${direct}`
          )
          assert.notInclude(
            told.map((t) => t.url),
            `/apps/decisions/decision-${other}`
          )

          // Archiving the role it left empty, then archiving it again: the archive tells once more (a new
          // happening), the repeat adds nothing.
          yield* decisions.archiveRole(admin, "finance")
          const afterArchive = unroutedOf(yield* outbox.pending(1000))
          assert.lengthOf(afterArchive, 4)
          yield* decisions.archiveRole(admin, "finance")
          assert.lengthOf(unroutedOf(yield* outbox.pending(1000)), 4)
          assert.strictEqual(new Set(afterArchive.map((t) => t.id)).size, 4)
        }).pipe(Effect.provide(layer)),
      // A fresh embedded database is migrated first: slow on a busy machine.
      120_000
    )

    it.effect(
      "the last two holders removed at once still tell the admins: one removal sees the other",
      () =>
        Effect.gen(function* () {
          const { decisions, caller } = yield* setUp
          const outbox = yield* ProducerOutbox
          for (let round = 0; round < 6; round++) {
            const slug = `desk-${round}`
            yield* decisions.createRole(admin, { slug, name: slug })
            yield* decisions.assign(admin, slug, "ann@acme.test")
            yield* decisions.assign(admin, slug, "bob@acme.test")
            const { decision } = yield* decisions.create(caller, {
              title: `Desk ${round}?`,
              roleSlug: slug,
              options: [{ label: "Yes" }, { label: "No" }]
            })
            yield* Effect.all(
              [decisions.unassign(admin, slug, "ann@acme.test"), decisions.unassign(admin, slug, "bob@acme.test")],
              { concurrency: "unbounded" }
            )
            const told = unroutedOf(yield* outbox.pending(1000)).filter(
              (t) => t.url === `/apps/decisions/decision-${decision.id}`
            )
            assert.sameMembers(
              told.map((t) => t.to),
              ["carol@acme.test", "dan@acme.test"],
              `round ${round}`
            )
          }
        }).pipe(Effect.provide(layer)),
      // A fresh embedded database is migrated first: slow on a busy machine.
      120_000
    )

    it.effect(
      "archiving a role with holders tells the admins; a unit undone tells nobody (SQL)",
      () =>
        Effect.gen(function* () {
          const { decisions, ask } = yield* setUp
          const outbox = yield* ProducerOutbox
          const transactions = yield* Transactions
          const contract = yield* ask("Contract?", "legal")

          if (undoes) {
            // Archived inside a unit that then fails: neither the archive nor its notifications are kept.
            const undone = yield* Effect.flip(
              transactions.atomically(Effect.andThen(decisions.archiveRole(admin, "legal"), Effect.fail("undo")))
            )
            assert.strictEqual(undone, "undo")
            assert.deepStrictEqual(unroutedOf(yield* outbox.pending(1000)), [])
          }

          yield* decisions.archiveRole(admin, "legal")
          const told = unroutedOf(yield* outbox.pending(1000))
          assert.sameMembers(
            told.map((t) => t.to),
            ["carol@acme.test", "dan@acme.test"]
          )
          assert.isTrue(told.every((t) => t.url === `/apps/decisions/decision-${contract}`))
          // Nobody held finance's decisions away: removing a holder of a role that still has one says nothing.
          yield* decisions.unassign(admin, "finance", "ann@acme.test")
          assert.lengthOf(unroutedOf(yield* outbox.pending(1000)), 2)
        }).pipe(Effect.provide(layer)),
      // A fresh embedded database is migrated first: slow on a busy machine.
      120_000
    )
  })

suite("memory", DecisionsMemory, false)
for (const backend of sqlBackends) suite(backend.name, decisionsSqlOn(backend).pipe(Layer.orDie), true)
