import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import { AnswerByLink, AnswerLinkUses } from "../../core/decisions/AnswerByLink.ts"
import type { AnswerAction } from "../../core/decisions/AnswerLinks.ts"
import {
  answerLinkKey,
  issueAnswerToken,
  newNonce,
  readAnswerToken,
  type AnswerClaims
} from "../../core/decisions/AnswerToken.ts"
import { CallerAuthentication } from "../../core/decisions/CallerAuthentication.ts"
import { Escalations } from "../../core/decisions/Escalations.ts"
import { Decisions, type CallerIdentity, type WorkspaceUser } from "../../core/decisions/Decisions.ts"
import { ProducerOutbox } from "../../core/events/ProducerOutbox.ts"
import { isoAt } from "../../core/kernel/Timestamp.ts"
import { DecisionsDataMemory, DecisionsUseCases } from "../../apps/server/decisions/DecisionsLayers.ts"
import { testDecisionsSettings, testOutbound } from "../support/DecisionsMemory.ts"

const key = answerLinkKey("answer-links-test-secret-0123456789")
const claims: AnswerClaims = {
  organizationId: "acme",
  decisionId: "01J00000000000000000000000",
  email: "ann@acme.test",
  optionId: "yes",
  expiresAtSeconds: 1_900_000_000,
  nonce: newNonce()
}

describe("answer tokens", () => {
  it("read back exactly what they were issued with, and only under their key", () => {
    const token = issueAnswerToken(key, claims)
    assert.deepStrictEqual(readAnswerToken(key, token), claims)
    assert.deepStrictEqual(readAnswerToken(key, issueAnswerToken(key, { ...claims, optionId: undefined })), {
      ...claims,
      optionId: undefined
    })
    assert.isUndefined(readAnswerToken(answerLinkKey("another-secret-0123456789"), token))
  })

  it("a token made for another decision, person, option or expiry is not this one", () => {
    const token = issueAnswerToken(key, claims)
    const [payload, signature] = token.split(".") as [string, string]
    const forged = (change: Partial<AnswerClaims>) => {
      const fields = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>
      const names = { decisionId: "d", email: "e", optionId: "a", expiresAtSeconds: "x", organizationId: "o" }
      for (const [name, value] of Object.entries(change)) fields[names[name as keyof typeof names]] = value ?? null
      return `${Buffer.from(JSON.stringify(fields)).toString("base64url")}.${signature}`
    }
    for (const change of [
      { decisionId: "01J00000000000000000000001" },
      { email: "mallory@acme.test" },
      { optionId: "no" },
      { optionId: undefined },
      { expiresAtSeconds: 2_000_000_000 },
      { organizationId: "other" }
    ]) {
      assert.isUndefined(readAnswerToken(key, forged(change)), JSON.stringify(change))
    }
  })

  it("any change to a token's text makes it unreadable (property)", () => {
    const token = issueAnswerToken(key, claims)
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: token.length - 1 }),
        fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.="),
        (at, char) => {
          fc.pre(token[at] !== char)
          const altered = `${token.slice(0, at)}${char}${token.slice(at + 1)}`
          return readAnswerToken(key, altered) === undefined
        }
      ),
      { numRuns: 500 }
    )
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (junk) => readAnswerToken(key, junk) === undefined),
      { numRuns: 200 }
    )
  })
})

const admin: WorkspaceUser = { organizationId: "acme", email: "admin@acme.test", isAdmin: true }
const ann = "ann@acme.test"
const bob = "bob@acme.test"

const secretsKey = "secret-0123456789abcdef"
const stack = DecisionsUseCases(
  { ...testDecisionsSettings, answerLinks: { baseUrl: "https://decisions.test/", secretsKey } },
  { data: DecisionsDataMemory, ...testOutbound() }
)

/** A decision for the `ops` role (Ann and Bob), and each person's links from its notifications. */
const setUp = (expiresInMillis?: number) =>
  Effect.gen(function* () {
    const decisions = yield* Decisions
    yield* decisions.createRole(admin, { slug: "ops", name: "Ops" })
    yield* decisions.assign(admin, "ops", ann)
    yield* decisions.assign(admin, "ops", bob)
    const key = yield* decisions.createKey(admin, "agent")
    const caller = (yield* (yield* CallerAuthentication).authenticate(key.plaintext)) as CallerIdentity
    const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
    const created = yield* decisions.create(caller, {
      title: "Ship it?",
      roleSlug: "ops",
      options: [{ label: "Ship" }, { label: "Hold" }],
      ...(expiresInMillis === undefined ? {} : { expiresAt: isoAt(now + expiresInMillis) })
    })
    const events = yield* (yield* ProducerOutbox).pending(100)
    const linksOf = (email: string) =>
      (events.find((e) => e.subject.email === email)?.data["actions"] ?? []) as ReadonlyArray<AnswerAction>
    const tokenOf = (email: string, label: string) =>
      new URL(linksOf(email).find((a) => a.label === label)!.url).searchParams.get("token")!
    return { decision: created.decision, caller, linksOf, tokenOf }
  })

describe("answering from a notification's link", () => {
  it.effect("each holder's notification carries one link per option and Decline, at the configured address", () =>
    Effect.gen(function* () {
      const { linksOf } = yield* setUp()
      for (const email of [ann, bob]) {
        const links = linksOf(email)
        assert.deepStrictEqual(
          links.map((l) => l.label),
          ["Ship", "Hold", "Decline"]
        )
        for (const link of links) assert.isTrue(link.url.startsWith("https://decisions.test/answer?token="))
      }
      assert.notDeepEqual(linksOf(ann), linksOf(bob))
    }).pipe(Effect.provide(stack))
  )

  it.effect("opening changes nothing; the confirmation answers for the person it was sent to, once", () =>
    Effect.gen(function* () {
      const decisions = yield* Decisions
      const links = yield* AnswerByLink
      const { decision, tokenOf } = yield* setUp()
      const token = tokenOf(ann, "Hold")
      const preview = yield* links.preview(token)
      assert.strictEqual(preview._tag, "Ready")
      yield* links.preview(token)
      assert.strictEqual((yield* decisions.get("acme", decision.id)).decision.status, "pending")

      const answered = yield* links.answer(token)
      assert.strictEqual(answered._tag, "Answered")
      const resolved = (yield* decisions.get("acme", decision.id)).decision
      assert.strictEqual(resolved.status, "resolved")
      assert.strictEqual(resolved.resolution?.decidedBy, ann)
      assert.strictEqual(resolved.resolution?.optionId, decision.options[1]!.id)

      // Used, and the decision is closed: the link shows what happened and does nothing more.
      assert.strictEqual((yield* links.answer(token))._tag, "Settled")
      assert.strictEqual((yield* links.preview(tokenOf(bob, "Ship")))._tag, "Settled")
      assert.strictEqual((yield* links.answer(tokenOf(bob, "Ship")))._tag, "Settled")
      assert.strictEqual((yield* decisions.get("acme", decision.id)).decision.resolution?.decidedBy, ann)
    }).pipe(Effect.provide(stack))
  )

  it.effect("Decline declines as the person", () =>
    Effect.gen(function* () {
      const decisions = yield* Decisions
      const links = yield* AnswerByLink
      const { decision, tokenOf } = yield* setUp()
      assert.strictEqual((yield* links.answer(tokenOf(bob, "Decline")))._tag, "Answered")
      const declined = (yield* decisions.get("acme", decision.id)).decision
      assert.strictEqual(declined.resolution?.kind, "declined")
      assert.strictEqual(declined.resolution?.decidedBy, bob)
    }).pipe(Effect.provide(stack))
  )

  it.effect("a person no longer a holder is refused at the confirmation, and the link stays unused", () =>
    Effect.gen(function* () {
      const decisions = yield* Decisions
      const links = yield* AnswerByLink
      const { decision, tokenOf } = yield* setUp()
      const token = tokenOf(ann, "Ship")
      yield* decisions.unassign(admin, "ops", ann)
      assert.strictEqual((yield* links.answer(token))._tag, "NotAllowed")
      assert.strictEqual((yield* decisions.get("acme", decision.id)).decision.status, "pending")
      yield* decisions.assign(admin, "ops", ann)
      assert.strictEqual((yield* links.answer(token))._tag, "Answered")
    }).pipe(Effect.provide(stack))
  )

  it.effect("a link whose use is recorded is refused while its decision is still open (a vote of several)", () =>
    Effect.gen(function* () {
      const links = yield* AnswerByLink
      const decisions = yield* Decisions
      const uses = yield* AnswerLinkUses
      const { decision, tokenOf } = yield* setUp()
      const token = tokenOf(ann, "Ship")
      const nonce = readAnswerToken(answerLinkKey(secretsKey), token)!.nonce
      assert.isTrue(yield* uses.spend({ nonce, decisionId: decision.id, atIso: isoAt(0) }))
      assert.isFalse(yield* uses.spend({ nonce, decisionId: decision.id, atIso: isoAt(0) }))
      assert.strictEqual((yield* links.preview(token))._tag, "Used")
      assert.strictEqual((yield* links.answer(token))._tag, "Used")
      assert.strictEqual((yield* decisions.get("acme", decision.id)).decision.status, "pending")
      // Another link of the same person still answers.
      assert.strictEqual((yield* links.answer(tokenOf(ann, "Hold")))._tag, "Answered")
    }).pipe(Effect.provide(stack))
  )

  it.effect("a link past its time, a tampered one, and a cancelled decision's answer nothing", () =>
    Effect.gen(function* () {
      const decisions = yield* Decisions
      const links = yield* AnswerByLink
      const { decision, caller, tokenOf } = yield* setUp(60_000)
      const token = tokenOf(ann, "Ship")
      assert.strictEqual((yield* links.answer(`${token.slice(0, -1)}0`))._tag, "Invalid")
      assert.strictEqual(
        (yield* links.answer(tokenOf(bob, "Hold").replace(/\..*/, `.${"0".repeat(64)}`)))._tag,
        "Invalid"
      )
      yield* TestClock.adjust("61 seconds")
      // The decision expired with its link: the page says how it ended.
      const expired = yield* links.answer(token)
      assert.strictEqual(expired._tag, "Settled")
      assert.strictEqual((yield* decisions.get("acme", decision.id)).decision.status, "expired")

      const other = yield* setUpAnother(caller)
      yield* decisions.cancel(caller, other.decision.id)
      const cancelled = yield* links.preview(other.tokenOf(bob, "Ship"))
      assert.strictEqual(cancelled._tag, "Settled")
      assert.strictEqual(cancelled._tag === "Settled" ? cancelled.decision.status : "", "cancelled")
    }).pipe(Effect.provide(stack))
  )
})

const setUpAnother = (caller: CallerIdentity) =>
  Effect.gen(function* () {
    const decisions = yield* Decisions
    const created = yield* decisions.create(caller, {
      title: "Another",
      roleSlug: "ops",
      options: [{ label: "Ship" }, { label: "Hold" }]
    })
    const events = (yield* (yield* ProducerOutbox).pending(100)).filter(
      (e) => e.data["url"] === `/apps/decisions/decision-${created.decision.id}`
    )
    const tokenOf = (email: string, label: string) => {
      const actions = (events.find((e) => e.subject.email === email)?.data["actions"] ??
        []) as ReadonlyArray<AnswerAction>
      return new URL(actions.find((a) => a.label === label)!.url).searchParams.get("token")!
    }
    return { decision: created.decision, tokenOf }
  })

describe("an escalation's reminder", () => {
  it.effect("carries each holder's answer links, as the first ask did", () =>
    Effect.gen(function* () {
      const decisions = yield* Decisions
      yield* decisions.createRole(admin, { slug: "ops", name: "Ops" })
      yield* decisions.assign(admin, "ops", ann)
      const key = yield* decisions.createKey(admin, "agent")
      const caller = (yield* (yield* CallerAuthentication).authenticate(key.plaintext)) as CallerIdentity
      yield* decisions.create(caller, {
        title: "Ship it?",
        roleSlug: "ops",
        options: [{ label: "Ship" }, { label: "Hold" }],
        escalation: [{ after: 60, action: "remind" }]
      })
      yield* TestClock.adjust("61 seconds")
      assert.strictEqual(yield* (yield* Escalations).runDue(), 1)
      const reminder = (yield* (yield* ProducerOutbox).pending(100)).find(
        (e) => e.subject.email === ann && String(e.data["body"]).startsWith("Reminder:")
      )
      assert.isDefined(reminder)
      const links = (reminder?.data["actions"] ?? []) as ReadonlyArray<AnswerAction>
      assert.deepStrictEqual(
        links.map((l) => l.label),
        ["Ship", "Hold", "Decline"]
      )
      for (const link of links) assert.isTrue(link.url.startsWith("https://decisions.test/answer?token="))
    }).pipe(Effect.provide(stack))
  )
})
