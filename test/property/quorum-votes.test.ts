import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as fc from "fast-check"
import type { Decision, DecisionStatus } from "../../core/decisions/Decision.ts"
import { settle, step, type Command } from "../../core/decisions/DecisionMachine.ts"
import { castVote, tally, type Vote as StoredVote } from "../../core/decisions/Quorum.ts"
import { isoAt } from "../../core/kernel/Timestamp.ts"

/**
 * The vote state machine against a model: random sequences of votes (choices and declines by a handful of
 * people, some with their email spelled in another case), questions, routes, cancels and clock ticks on a
 * decision with a quorum, through the decision machine that applies them.
 */

const t0 = Date.parse("2026-01-01T00:00:00.000Z")
const options = ["opt_yes", "opt_no", "opt_maybe"] as const
const people = ["ann", "bob", "cat", "dan", "eve"] as const
type Person = (typeof people)[number]
/** What a person voted for: an option, or "decline". */
type Ballot = (typeof options)[number] | "decline"

const makeDecision = (count: number, expiresInMs: number | undefined, withDefault: boolean): Decision => ({
  id: "01JDECISION0000000000000000",
  organizationId: "org_1",
  callerName: "agent",
  roleSlug: "finance",
  status: "pending",
  title: "Approve the refund?",
  facts: [],
  links: [],
  options: options.map((id) => ({ id, label: id, ...(withDefault && id === "opt_yes" ? { default: true } : {}) })),
  urgency: "normal",
  ...(expiresInMs === undefined ? {} : { expiresAt: isoAt(t0 + expiresInMs) }),
  ...(withDefault ? { defaultOptionId: "opt_yes" } : {}),
  infoRequests: [],
  assignmentHistory: [],
  quorum: { count, votes: [] },
  createdAt: isoAt(t0),
  updatedAt: isoAt(t0),
  version: 0
})

/** The model, as plainly as the rules read. */
interface Model {
  status: DecisionStatus
  /** Each person's current vote, in the order of their latest vote. */
  votes: Array<{ readonly who: Person; readonly ballot: Ballot }>
  /** The winning ballot and its voters, once resolved by votes. */
  outcome: { readonly ballot: Ballot; readonly voters: ReadonlyArray<Person>; readonly by: Person } | undefined
  now: number
  readonly count: number
  readonly expiresAt: number | undefined
  readonly hasDefault: boolean
}

interface Real {
  decision: Decision
  now: number
}

const isOpenModel = (m: Model) => m.status === "pending" || m.status === "needs_info"

const expireModel = (m: Model) => {
  if (isOpenModel(m) && m.expiresAt !== undefined && m.expiresAt <= m.now) m.status = "expired"
}

const emailOf = (who: Person, shouting: boolean) =>
  shouting ? `${who.toUpperCase()}@EXAMPLE.COM` : `${who}@example.com`
const personOf = (email: string) => email.toLowerCase().split("@")[0] as Person

/** What the real decision shows must be what the model says, read as anyone would read it now. */
const agree = (m: Model, r: Real) => {
  const seen = settle(r.decision, r.now).decision
  assert.strictEqual(seen.status, m.status)
  const votes = seen.quorum!.votes
  assert.deepStrictEqual(
    votes.map((v) => ({ who: personOf(v.by), ballot: v.kind === "declined" ? "decline" : v.optionId })),
    m.votes.map((v) => ({ who: v.who, ballot: v.ballot }))
  )
  // One vote per person, whatever the spelling of their email.
  assert.strictEqual(new Set(votes.map((v) => personOf(v.by))).size, votes.length)
  // While open, no ballot has reached the count.
  const counts = tally(seen.quorum!, options)
  if (m.status === "pending" || m.status === "needs_info") {
    assert.isBelow(Math.max(counts.declined, ...Object.values(counts.options)), m.count)
  }
  if (m.outcome !== undefined) {
    const resolution = seen.resolution!
    assert.strictEqual(resolution.kind, m.outcome.ballot === "decline" ? "declined" : "chosen")
    assert.strictEqual(resolution.optionId, m.outcome.ballot === "decline" ? undefined : m.outcome.ballot)
    assert.strictEqual(personOf(resolution.decidedBy), m.outcome.by)
    assert.deepStrictEqual(
      resolution.votes?.map((v) => personOf(v.by)),
      m.outcome.voters
    )
    assert.strictEqual(resolution.votes?.length, m.count)
  } else if (m.status === "expired") {
    assert.strictEqual(seen.resolution?.kind, m.hasDefault ? "expired_default" : "expired")
    assert.isUndefined(seen.resolution?.votes)
  } else {
    assert.isUndefined(seen.resolution)
  }
}

class Vote implements fc.Command<Model, Real> {
  constructor(
    readonly who: Person,
    readonly ballot: Ballot,
    readonly shouting: boolean
  ) {}
  check = () => true
  run(m: Model, r: Real) {
    expireModel(m)
    const actor = emailOf(this.who, this.shouting)
    const command: Command =
      this.ballot === "decline" ? { _tag: "Decline", actor } : { _tag: "Choose", actor, optionId: this.ballot }
    const result = step(r.decision, command, r.now)
    assert.strictEqual(Result.isSuccess(result), isOpenModel(m), `vote from ${m.status}`)
    if (Result.isSuccess(result)) {
      r.decision = result.success.decision
      m.votes = [...m.votes.filter((v) => v.who !== this.who), { who: this.who, ballot: this.ballot }]
      const voters = m.votes.filter((v) => v.ballot === this.ballot).map((v) => v.who)
      if (voters.length >= m.count) {
        m.status = "resolved"
        m.outcome = { ballot: this.ballot, voters, by: this.who }
      }
      // Only the resolving vote tells the world (a webhook, a long-poll's answer, an applied option).
      const told = result.success.consequences.map((c) => c._tag)
      assert.deepStrictEqual(
        told,
        m.outcome?.by === this.who && m.status === "resolved"
          ? ["StatusChanged", ...(this.ballot === "decline" ? [] : ["OptionApplied"])]
          : []
      )
    }
    agree(m, r)
  }
  toString = () => `vote(${this.who}${this.shouting ? "!" : ""}, ${this.ballot})`
}

/** A move that is not a vote: a question, its answer, a route, a cancel. Votes survive all but a cancel. */
class Other implements fc.Command<Model, Real> {
  constructor(readonly kind: "ask" | "answer" | "route" | "cancel") {}
  check = () => true
  run(m: Model, r: Real) {
    expireModel(m)
    const last = r.decision.infoRequests.at(-1)?.id ?? "none"
    const command: Command =
      this.kind === "ask"
        ? { _tag: "AskInfo", actor: "ann@example.com", infoRequestId: `q${r.decision.version}`, question: "Which?" }
        : this.kind === "answer"
          ? { _tag: "AnswerInfo", infoRequestId: last, answer: "That one" }
          : this.kind === "route"
            ? { _tag: "Route", actor: "ann@example.com", toRole: "legal" }
            : { _tag: "Cancel" }
    const result = step(r.decision, command, r.now)
    const expected =
      this.kind === "ask" ? m.status === "pending" : this.kind === "answer" ? m.status === "needs_info" : isOpenModel(m)
    assert.strictEqual(Result.isSuccess(result), expected, `${this.kind} from ${m.status}`)
    if (Result.isSuccess(result)) {
      r.decision = result.success.decision
      if (this.kind === "ask") m.status = "needs_info"
      if (this.kind === "answer") m.status = "pending"
      if (this.kind === "cancel") m.status = "cancelled"
    }
    agree(m, r)
  }
  toString = () => this.kind
}

class Tick implements fc.Command<Model, Real> {
  constructor(readonly ms: number) {}
  check = () => true
  run(m: Model, r: Real) {
    m.now += this.ms
    r.now += this.ms
    expireModel(m)
    agree(m, r)
  }
  toString = () => `tick(${this.ms})`
}

const commands = [
  fc
    .tuple(fc.constantFrom(...people), fc.constantFrom<Ballot>(...options, "decline"), fc.boolean())
    .map(([who, ballot, shouting]) => new Vote(who, ballot, shouting)),
  fc.constantFrom("ask" as const, "answer" as const, "route" as const, "cancel" as const).map((k) => new Other(k)),
  fc.integer({ min: 1, max: 120_000 }).map((ms) => new Tick(ms))
]

describe("the vote state machine (model-based)", () => {
  it("agrees with the model on every random sequence of votes, other moves and clock ticks", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: people.length }),
        fc.option(fc.integer({ min: 1, max: 1_200_000 }), { nil: undefined }),
        fc.boolean(),
        fc.commands(commands, { maxCommands: 40 }),
        (count, expiresIn, withDefault, cmds) => {
          const hasDefault = withDefault && expiresIn !== undefined
          const setup = () => ({
            model: {
              status: "pending" as DecisionStatus,
              votes: [],
              outcome: undefined,
              now: t0,
              count,
              expiresAt: expiresIn === undefined ? undefined : t0 + expiresIn,
              hasDefault
            } satisfies Model,
            real: { decision: makeDecision(count, expiresIn, hasDefault), now: t0 }
          })
          fc.modelRun(setup, cmds)
        }
      ),
      { numRuns: 400 }
    )
  })

  it("castVote: a person's new vote replaces their old one; only the ballot voted for can reach the count", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.tuple(fc.constantFrom(...people), fc.constantFrom<Ballot>(...options, "decline")), {
          maxLength: 20
        }),
        (count, votes) => {
          let quorum = { count, votes: [] as ReadonlyArray<StoredVote> }
          for (const [i, [who, ballot]] of votes.entries()) {
            const cast = castVote(
              quorum,
              emailOf(who, i % 2 === 0),
              ballot === "decline" ? { kind: "declined" } : { kind: "chosen", optionId: ballot },
              isoAt(t0 + i)
            )
            const before = tally(quorum, options)
            const after = tally(cast.quorum, options)
            assert.strictEqual(cast.quorum.votes.length, new Set(cast.quorum.votes.map((v) => personOf(v.by))).size)
            // Every other ballot keeps or loses votes.
            for (const id of options) if (id !== ballot) assert.isAtMost(after.options[id]!, before.options[id]!)
            if (ballot !== "decline") assert.isAtMost(after.declined, before.declined)
            const mine = ballot === "decline" ? after.declined : after.options[ballot]!
            assert.strictEqual(cast.outcome !== undefined, mine >= count)
            if (cast.outcome !== undefined) break
            quorum = cast.quorum
          }
        }
      ),
      { numRuns: 300 }
    )
  })
})
