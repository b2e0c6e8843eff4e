import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Exit, ManagedRuntime } from "effect"
import { randomUUID } from "node:crypto"
import * as fc from "fast-check"
import { CallerAuthentication } from "../../core/decisions/CallerAuthentication.ts"
import { Decisions, type CallerIdentity, type WorkspaceUser } from "../../core/decisions/Decisions.ts"
import { pglite } from "../support/Databases.ts"
import { DecisionsMemory } from "../support/DecisionsMemory.ts"
import { decisionsSqlOn } from "../support/DecisionsSql.ts"

const orgNames = ["org_a", "org_b", "org_c"] as const

const admin = (organizationId: string): WorkspaceUser => ({
  organizationId,
  email: `admin@${organizationId}.example`,
  isAdmin: true
})

/**
 * With random decisions in several organizations, no caller key or workspace user of one organization
 * ever reads, lists or changes a decision of another: every attempt answers NotFound and changes nothing.
 */
const backends = [
  { name: "memory", runtime: () => ManagedRuntime.make(DecisionsMemory) },
  { name: "sql (PGlite)", runtime: () => ManagedRuntime.make(decisionsSqlOn(pglite)) }
]

describe.each(backends)("decisions tenant isolation (property, $name)", (backend) => {
  // One store for the whole property; every run works in organizations of its own.
  let runtime: ReturnType<typeof backend.runtime>
  beforeAll(() => {
    runtime = backend.runtime()
  })
  afterAll(() => runtime.dispose())

  it("no identity ever reads or changes another organization's decision", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ org: fc.constantFrom(...orgNames), title: fc.string({ minLength: 1, maxLength: 30 }) }), {
          minLength: 1,
          maxLength: 12
        }),
        fc.array(
          fc.tuple(
            fc.constantFrom(...orgNames),
            fc.nat(),
            fc.constantFrom("get", "choose", "decline", "ask", "route", "cancel", "answer", "wait")
          ),
          {
            maxLength: 25
          }
        ),
        (specs, attempts) =>
          Effect.gen(function* () {
            const run = randomUUID().slice(0, 8)
            const orgs = orgNames.map((name) => `${name}_${run}`)
            const orgOf = (name: (typeof orgNames)[number]) => `${name}_${run}`
            const decisions = yield* Decisions
            const callers = new Map<string, CallerIdentity>()
            for (const org of orgs) {
              yield* decisions.createRole(admin(org), { slug: "ops", name: "Ops" })
              yield* decisions.assign(admin(org), "ops", admin(org).email)
              const created = yield* decisions.createKey(admin(org), "agent")
              const caller = yield* (yield* CallerAuthentication).authenticate(created.plaintext)
              assert.isDefined(caller)
              callers.set(org, caller!)
            }
            const made = []
            for (const spec of specs) {
              const view = yield* decisions.create(callers.get(orgOf(spec.org))!, {
                title: spec.title,
                roleSlug: "ops",
                options: [{ label: "Yes" }, { label: "No" }]
              })
              made.push(view.decision)
            }
            for (const [orgName, index, action] of attempts) {
              const org = orgOf(orgName)
              const target = made[index % made.length]!
              if (target.organizationId === org) continue
              const before = yield* decisions.get(target.organizationId, target.id)
              const user = admin(org)
              const caller = callers.get(org)!
              const attempt =
                action === "get"
                  ? decisions.get(org, target.id)
                  : action === "choose"
                    ? decisions.choose(user, target.id, { optionId: target.options[0]!.id })
                    : action === "decline"
                      ? decisions.decline(user, target.id, {})
                      : action === "ask"
                        ? decisions.askInfo(user, target.id, "why?")
                        : action === "route"
                          ? decisions.route(user, target.id, { toRole: "ops" })
                          : action === "cancel"
                            ? decisions.cancel(caller, target.id)
                            : action === "answer"
                              ? decisions.answerInfo(caller, target.id, { infoRequestId: "x", answer: "y" })
                              : decisions.waitForChange(org, target.id, 0)
              const exit = yield* Effect.exit(attempt)
              assert.isTrue(Exit.isFailure(exit), `${action} across organizations must fail`)
              if (Exit.isFailure(exit)) {
                const error = exit.cause.reasons[0]
                assert.strictEqual(
                  error?._tag === "Fail" ? (error.error as { _tag: string })._tag : "defect",
                  "NotFound"
                )
              }
              const after = yield* decisions.get(target.organizationId, target.id)
              assert.deepStrictEqual(after, before)
            }
            for (const org of orgs) {
              const page = yield* decisions.list(org, { _tag: "All" }, { limit: 100 })
              assert.isTrue(page.decisions.every((d) => d.organizationId === org))
              assert.strictEqual(page.decisions.length, made.filter((d) => d.organizationId === org).length)
            }
          }).pipe((effect) => runtime.runPromise(effect))
      ),
      { numRuns: 40 }
    )
  })
})
