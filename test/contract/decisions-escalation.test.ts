import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Exit, type Layer } from "effect"
import { CallerAuthentication } from "../../core/decisions/CallerAuthentication.ts"
import { Decisions, type CallerIdentity, type WorkspaceUser } from "../../core/decisions/Decisions.ts"
import { DecisionStore } from "../../core/decisions/DecisionStore.ts"
import { Escalations } from "../../core/decisions/Escalations.ts"
import { OrganizationAdmins } from "../../core/decisions/OrganizationAdmins.ts"
import { Templates } from "../../core/decisions/Templates.ts"
import { WebhookOutbox } from "../../core/decisions/WebhookOutbox.ts"
import { Webhooks } from "../../core/decisions/Webhooks.ts"
import { ProducerOutbox, type ProducerEvent } from "../../core/events/ProducerOutbox.ts"
import { isoAt } from "../../core/kernel/Timestamp.ts"
import { sqlBackends } from "../support/Databases.ts"
import { DecisionsMemory } from "../support/DecisionsMemory.ts"
import { decisionsSqlOn } from "../support/DecisionsSql.ts"

/**
 * Escalation ladders (core/decisions/Escalations.ts): steps run in order, each once, only while the decision is
 * open; each step's notifications, routing and `decision.escalated` deliveries are written with its mark. On the
 * memory adapters and the SQL ones (PGlite, and Postgres when configured).
 */

type Services =
  | Decisions
  | CallerAuthentication
  | Escalations
  | Templates
  | Webhooks
  | WebhookOutbox
  | DecisionStore
  | ProducerOutbox
  | OrganizationAdmins

const options = [{ label: "Yes" }, { label: "No" }]

/**
 * A clock that stands still at `base` until the test moves it on (`advance`), sleeping as the live one does: the
 * SQL adapters' own timers keep the live clock, only the use cases' notion of now is the test's.
 */
const controlledClock = (base: number) => {
  let offset = 0
  const live = Clock.Clock.defaultValue()
  const nowMs = () => base + offset
  const clock: Clock.Clock = {
    monotonicTimeNanosUnsafe: () => live.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: live.monotonicTimeNanos,
    sleep: (duration) => live.sleep(duration),
    currentTimeMillisUnsafe: nowMs,
    currentTimeMillis: Effect.sync(nowMs),
    currentTimeNanosUnsafe: () => BigInt(nowMs()) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(nowMs()) * 1_000_000n)
  }
  return { clock, advance: (ms: number) => Effect.sync(() => void (offset += ms)) }
}

// Time only moves on within the file: a test's times are counted from where the one before it left them.
const controlled = controlledClock(Date.parse("2030-01-01T00:00:00.000Z"))
const advance = (seconds: number) => controlled.advance(seconds * 1000)

const toldOf = (events: ReadonlyArray<ProducerEvent>, decisionId: string, category: string) =>
  events
    .filter((e) => e.data["url"] === `/apps/decisions/decision-${decisionId}` && e.data["category"] === category)
    .map((e) => ({ to: e.subject.email, body: e.data["body"] as string }))

const suite = (name: string, layer: Layer.Layer<Services, unknown>) =>
  describe(`decision escalation (${name})`, () => {
    // Each test in an organization of its own: the claim looks across organizations.
    const setUp = (organizationId: string) =>
      Effect.gen(function* () {
        const decisions = yield* Decisions
        const start = yield* Clock.currentTimeMillis
        const at = (seconds: number) => isoAt(start + seconds * 1000)
        const admin: WorkspaceUser = { organizationId, email: "carol@acme.test", isAdmin: true }
        yield* (yield* OrganizationAdmins).note(organizationId, admin.email, true, at(0))
        for (const slug of ["finance", "legal"]) yield* decisions.createRole(admin, { slug, name: slug })
        yield* decisions.assign(admin, "finance", "ann@acme.test")
        yield* decisions.assign(admin, "finance", "bob@acme.test")
        yield* decisions.assign(admin, "legal", "lee@acme.test")
        const key = yield* decisions.createKey(admin, "agent")
        const caller = (yield* (yield* CallerAuthentication).authenticate(key.plaintext)) as CallerIdentity
        return { at, decisions, admin, caller, escalations: yield* Escalations, outbox: yield* ProducerOutbox }
      })

    it.live(
      "remind, route and notify_admins run in order, each once, when due; each is marked on the decision",
      () =>
        Effect.gen(function* () {
          const { at, decisions, caller, escalations, outbox } = yield* setUp("org-ladder")
          const webhooks = yield* Webhooks
          yield* webhooks.register(caller, "http://127.0.0.1:9/hook")
          const { decision } = yield* decisions.create(caller, {
            title: "Refund 42?",
            roleSlug: "finance",
            options,
            escalation: [
              { after: 60, action: "remind" },
              { after: 120, action: "route", toRole: "legal" },
              { after: 180, action: "notify_admins" }
            ]
          })
          assert.deepStrictEqual(
            decision.escalation?.map((s) => [s.action, s.dueAt, s.ranAt]),
            [
              ["remind", at(60), undefined],
              ["route", at(120), undefined],
              ["notify_admins", at(180), undefined]
            ]
          )
          assert.strictEqual(yield* escalations.runDue(), 0)

          yield* advance(61)
          assert.strictEqual(yield* escalations.runDue(), 1)
          assert.strictEqual(yield* escalations.runDue(), 0)
          const reminded = toldOf(yield* outbox.pending(1000), decision.id, "decision_assigned")
          // The first ask and the reminder, to each holder.
          assert.sameMembers(
            reminded.map((t) => t.to),
            ["ann@acme.test", "bob@acme.test", "ann@acme.test", "bob@acme.test"]
          )
          assert.include(reminded.map((t) => t.body).join("\n"), "Reminder: agent is still waiting")

          yield* advance(60)
          assert.strictEqual(yield* escalations.runDue(), 1)
          const routed = yield* decisions.get("org-ladder", decision.id)
          assert.strictEqual(routed.decision.roleSlug, "legal")
          assert.deepInclude(routed.decision.assignmentHistory.at(-1)!, {
            actor: "system:escalation",
            fromRole: "finance",
            toRole: "legal"
          })
          assert.deepStrictEqual(
            toldOf(yield* outbox.pending(1000), decision.id, "decision_assigned")
              .filter((t) => t.to === "lee@acme.test")
              .map((t) => t.body),
            ["system:escalation routed this decision to you."]
          )

          yield* advance(60)
          assert.strictEqual(yield* escalations.runDue(), 1)
          assert.strictEqual(yield* escalations.runDue(), 0)
          assert.deepStrictEqual(
            toldOf(yield* outbox.pending(1000), decision.id, "decision_escalated").map((t) => t.to),
            ["carol@acme.test"]
          )
          const done = (yield* decisions.get("org-ladder", decision.id)).decision
          assert.deepStrictEqual(
            done.escalation?.map((s) => [s.ranAt, s.outcome]),
            [
              [at(61), "done"],
              [at(121), "done"],
              [at(181), "done"]
            ]
          )
          const deliveries = yield* (yield* WebhookOutbox).list("org-ladder", { limit: 100 })
          const escalated = deliveries.filter((d) => d.eventType === "decision.escalated")
          assert.lengthOf(escalated, 3)
          assert.sameMembers(
            escalated.map((d) => JSON.parse(d.payload).data.escalation.action),
            ["remind", "route", "notify_admins"]
          )
        }).pipe(Effect.provideService(Clock.Clock, controlled.clock), Effect.provide(layer)),
      120_000
    )

    it.live(
      "a resolved decision escalates no further; overdue steps run one by one in order",
      () =>
        Effect.gen(function* () {
          const { decisions, caller, escalations } = yield* setUp("org-stop")
          const ann: WorkspaceUser = { organizationId: "org-stop", email: "ann@acme.test", isAdmin: false }
          const ladder = [
            { after: 60, action: "remind" },
            { after: 120, action: "notify_admins" }
          ] as const
          const answered = yield* decisions.create(caller, {
            title: "A",
            roleSlug: "finance",
            options,
            escalation: ladder
          })
          const waiting = yield* decisions.create(caller, {
            title: "B",
            roleSlug: "finance",
            options,
            escalation: ladder
          })
          yield* decisions.choose(ann, answered.decision.id, { optionId: answered.decision.options[0]!.id })
          yield* advance(600)
          assert.strictEqual(yield* escalations.runDue(1), 1)
          const first = (yield* decisions.get("org-stop", waiting.decision.id)).decision
          assert.deepStrictEqual(
            first.escalation?.map((s) => s.ranAt !== undefined),
            [true, false]
          )
          assert.strictEqual(yield* escalations.runDue(), 1)
          assert.strictEqual(yield* escalations.runDue(), 0)
          const stopped = (yield* decisions.get("org-stop", answered.decision.id)).decision
          assert.isTrue(stopped.escalation?.every((s) => s.ranAt === undefined))
        }).pipe(Effect.provideService(Clock.Clock, controlled.clock), Effect.provide(layer)),
      120_000
    )

    it.live(
      "workers running side by side run each step exactly once",
      () =>
        Effect.gen(function* () {
          const { decisions, caller, escalations, outbox } = yield* setUp("org-race")
          const ids: Array<string> = []
          for (let i = 0; i < 6; i++) {
            const { decision } = yield* decisions.create(caller, {
              title: `Race ${i}`,
              roleSlug: "finance",
              options,
              escalation: [
                { after: 30, action: "remind" },
                { after: 60, action: "remind" }
              ]
            })
            ids.push(decision.id)
          }
          yield* advance(120)
          const ran = yield* Effect.all(
            Array.from({ length: 4 }, () => escalations.runDue()),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(
            ran.reduce((a, b) => a + b, 0),
            12
          )
          const events = yield* outbox.pending(10_000)
          for (const id of ids) {
            // The first ask and two reminders, to each of the two holders.
            assert.lengthOf(toldOf(events, id, "decision_assigned"), 6)
          }
        }).pipe(Effect.provideService(Clock.Clock, controlled.clock), Effect.provide(layer)),
      120_000
    )

    it.live(
      "a ladder out of order, too long, past the expiry or with a bad target is a validation error naming the step",
      () =>
        Effect.gen(function* () {
          const { at, decisions, caller } = yield* setUp("org-invalid")
          const refused = (escalation: ReadonlyArray<Record<string, unknown>>, expiresAt?: string) =>
            Effect.gen(function* () {
              const exit = yield* Effect.exit(
                decisions.create(caller, {
                  title: "Bad",
                  roleSlug: "finance",
                  options,
                  escalation: escalation as never,
                  ...(expiresAt === undefined ? {} : { expiresAt })
                })
              )
              assert.isTrue(Exit.isFailure(exit))
              const error = Exit.isFailure(exit) ? (exit.cause.reasons[0] as { error?: unknown }).error : undefined
              assert.strictEqual((error as { _tag?: string })._tag, "ValidationError")
              return (error as { details: ReadonlyArray<{ field: string }> }).details[0]!.field
            })
          assert.strictEqual(
            yield* refused([
              { after: 60, action: "remind" },
              { after: 60, action: "notify_admins" }
            ]),
            "escalation.1.after"
          )
          assert.strictEqual(
            yield* refused(Array.from({ length: 11 }, (_, i) => ({ after: i + 1, action: "remind" }))),
            "escalation"
          )
          assert.strictEqual(yield* refused([{ after: 3600, action: "remind" }], at(1800)), "escalation.0.after")
          assert.strictEqual(yield* refused([{ after: 60, action: "route" }]), "escalation.0.toRole")
          assert.strictEqual(
            yield* refused([{ after: 60, action: "route", toRole: "nobody-here" }]),
            "escalation.0.toRole"
          )
          assert.strictEqual(
            yield* refused([{ after: 60, action: "remind", toEmail: "x@acme.test" }]),
            "escalation.0.action"
          )
        }).pipe(Effect.provideService(Clock.Clock, controlled.clock), Effect.provide(layer)),
      120_000
    )

    it.live(
      "a role's ladder and a template's apply to decisions created without one; a role's is cut at the expiry",
      () =>
        Effect.gen(function* () {
          const { at, decisions, admin, caller } = yield* setUp("org-defaults")
          const templates = yield* Templates
          yield* decisions.updateRole(admin, "finance", {
            escalation: [
              { after: 60, action: "remind" },
              { after: 7200, action: "notify_admins" }
            ]
          })
          const plain = yield* decisions.create(caller, { title: "P", roleSlug: "finance", options })
          assert.deepStrictEqual(
            plain.decision.escalation?.map((s) => s.action),
            ["remind", "notify_admins"]
          )
          const expiring = yield* decisions.create(caller, {
            title: "E",
            roleSlug: "finance",
            options,
            expiresAt: at(3600)
          })
          assert.deepStrictEqual(
            expiring.decision.escalation?.map((s) => s.action),
            ["remind"]
          )
          yield* templates.create(admin, {
            slug: "refund",
            name: "Refund",
            roleSlug: "finance",
            titleTemplate: "Refund {{order}}?",
            options,
            escalation: [{ after: 30, action: "route", toRole: "legal" }]
          })
          const raised = yield* templates.raise(caller, "refund", { order: "7" })
          assert.deepStrictEqual(
            raised.decision.escalation?.map((s) => [s.action, s.toRole]),
            [["route", "legal"]]
          )
          const exit = yield* Effect.exit(
            decisions.updateRole(admin, "legal", {
              escalation: [
                { after: 60, action: "remind" },
                { after: 30, action: "remind" }
              ]
            })
          )
          assert.isTrue(Exit.isFailure(exit))
          assert.strictEqual(
            (yield* decisions.listRoles(admin)).find((r) => r.slug === "finance")?.escalation?.length,
            2
          )
        }).pipe(Effect.provideService(Clock.Clock, controlled.clock), Effect.provide(layer)),
      120_000
    )
  })

suite("memory", DecisionsMemory)
for (const backend of sqlBackends) suite(backend.name, decisionsSqlOn(backend))
