import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Exit, ManagedRuntime, Schema } from "effect"
import * as fc from "fast-check"
import { randomUUID } from "node:crypto"
import type { Decision } from "../../core/decisions/Decision.ts"
import { Decisions, type WorkspaceUser } from "../../core/decisions/Decisions.ts"
import { actionId, parseActionId, parsePageId, type PageActionAddress } from "../../core/decisions/pages/Addresses.ts"
import { DecisionPages } from "../../core/decisions/pages/DecisionPages.ts"
import { decisionPage } from "../../core/decisions/pages/DecisionPage.ts"
import { listPage } from "../../core/decisions/pages/ListPage.ts"
import { escapeMarkdown, markdownLinks } from "../../core/decisions/pages/Markdown.ts"
import { PageDocument, type Block } from "../../core/kernel/PageDocument.ts"
import { pglite } from "../support/Databases.ts"
import { DecisionsMemory } from "../support/DecisionsMemory.ts"
import { decisionsSqlOn } from "../support/DecisionsSql.ts"

const isPage = Schema.is(PageDocument)

const text = (max: number) => fc.string({ minLength: 1, maxLength: max, unit: "grapheme" })
const iso = fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }).map((ms) => new Date(ms).toISOString())
const ulid = fc.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/)

const decisionArb: fc.Arbitrary<Decision> = fc
  .record({
    id: ulid,
    status: fc.constantFrom("pending", "needs_info", "resolved", "expired", "cancelled" as const),
    title: text(200),
    body: fc.option(fc.string({ maxLength: 500 }), { nil: undefined }),
    facts: fc.array(fc.record({ label: text(80), value: text(400) }), { maxLength: 20 }),
    links: fc.array(fc.record({ label: text(80), url: fc.webUrl({ validSchemes: ["https"] }) }), { maxLength: 10 }),
    options: fc.uniqueArray(
      fc.record({
        id: fc.string({ minLength: 1, maxLength: 64 }),
        label: text(120),
        description: fc.option(fc.string({ maxLength: 100 }), { nil: undefined }),
        consequence: fc.option(fc.string({ maxLength: 100 }), { nil: undefined })
      }),
      { minLength: 2, maxLength: 5, selector: (o) => o.id }
    ),
    urgency: fc.constantFrom("normal", "urgent" as const),
    at: iso,
    asked: fc.array(fc.record({ question: text(200), answer: fc.option(text(200), { nil: undefined }) }), {
      maxLength: 3
    }),
    chosen: fc.nat(),
    actionStatus: fc.option(
      fc.constantFrom(
        "armed",
        "not_triggered",
        "queued",
        "waiting_for_setup",
        "retrying",
        "succeeded",
        "dead_lettered" as const
      ),
      { nil: undefined }
    )
  })
  .map((r): Decision => {
    const option = r.options[r.chosen % r.options.length]!
    const strip = (o: Record<string, unknown>): any =>
      Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))
    return {
      id: r.id,
      organizationId: "org",
      callerName: "agent",
      roleSlug: "ops",
      status: r.status,
      title: r.title,
      ...(r.body === undefined ? {} : { body: r.body }),
      facts: r.facts,
      links: r.links,
      options: r.options.map(strip),
      urgency: r.urgency,
      ...(r.status === "resolved"
        ? { resolution: { kind: "chosen" as const, optionId: option.id, decidedBy: "a@x.test", decidedAt: r.at } }
        : {}),
      infoRequests: r.asked.map((q, i) => strip({ id: `ir${i}`, askedBy: "a@x.test", askedAt: r.at, ...q })),
      assignmentHistory: [{ actor: "a@x.test", at: r.at, fromRole: "ops", toRole: "ops" }],
      ...(r.actionStatus === undefined
        ? {}
        : {
            actions: [
              {
                id: "act_1",
                optionId: option.id,
                type: "record_update" as const,
                summary: "Update Status on a record of tbl",
                status: r.actionStatus,
                attempts: 1,
                target: { baseId: "app", tableId: "tbl", recordId: "rec", fields: { Status: "x" } }
              }
            ]
          }),
      createdAt: r.at,
      updatedAt: r.at,
      version: 0
    }
  })

/** Every block, tabs opened. */
const blocksOf = (blocks: ReadonlyArray<Block>): ReadonlyArray<Block> =>
  blocks.flatMap((b) => (b.type === "tabs" ? [b, ...b.tabs.flatMap((t) => blocksOf(t.blocks))] : [b]))

const actionIdsOf = (blocks: ReadonlyArray<Block>): ReadonlyArray<string> =>
  blocksOf(blocks).flatMap((b) =>
    b.type === "actionRow" ? b.actions.map((a) => a.actionId) : b.type === "form" ? [b.submit.actionId] : []
  )

describe("decision pages (property)", () => {
  it("a decision's page is a valid document whose actions all target that decision, and only for deciders", () => {
    fc.assert(
      fc.property(decisionArb, fc.boolean(), fc.boolean(), (decision, canAct, isAdmin) => {
        const page = decisionPage({
          decision,
          routing: { assigneeCount: 1, unrouted: false },
          canAct,
          isAdmin,
          roles: [{ slug: "ops", name: "Ops" }]
        })
        assert.isTrue(isPage(page))
        const open = decision.status === "pending" || decision.status === "needs_info"
        for (const id of actionIdsOf(page.blocks)) {
          const address = parseActionId(id)
          assert.isDefined(address, id)
          assert.strictEqual((address as { decisionId?: string }).decisionId, decision.id)
          assert.strictEqual(actionId(address!), id)
          if (address!._tag === "Choose" || address!._tag === "Decline" || address!._tag === "Ask") {
            assert.isTrue(open && canAct, "decide actions only on open decisions, for deciders")
          }
          if (address!._tag === "Route") assert.isTrue(open && (canAct || isAdmin))
        }
        const chooses = actionIdsOf(page.blocks).filter((id) => /\.choose\./.test(id))
        assert.strictEqual(chooses.length, open && canAct ? decision.options.length : 0)
      })
    )
  })

  it("list pages show exactly the decisions given, each linked to its own page", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(decisionArb, { maxLength: 30, selector: (d) => d.id }),
        fc.constantFrom("inbox", "all", "unrouted" as const),
        fc.option(ulid, { nil: undefined }),
        (decisions, list, nextCursor) => {
          const page = listPage({ list, items: decisions.map((decision) => ({ decision })), nextCursor })
          assert.isTrue(isPage(page))
          const hrefs = blocksOf(page.blocks).flatMap((b) =>
            b.type === "table" ? b.rows.map((r) => r["href"]) : b.type === "list" ? b.items.map((i) => i.href) : []
          )
          const linked = hrefs.flatMap((h) => {
            const match = /^\/apps\/decisions\/(.+)$/.exec(h ?? "")
            const address = match === null ? undefined : parsePageId(match[1]!.split("?")[0]!)
            return address?._tag === "Decision" ? [address.decisionId] : []
          })
          assert.deepStrictEqual(
            linked,
            decisions.map((d) => d.id)
          )
          assert.strictEqual(hrefs.length, decisions.length + (nextCursor === undefined ? 0 : 1))
        }
      )
    )
  })

  it("action ids round-trip for any option id or email, and never hold a / or a space", () => {
    const addresses: fc.Arbitrary<PageActionAddress> = fc.oneof(
      fc.record({
        _tag: fc.constant("Choose" as const),
        decisionId: ulid,
        optionId: fc.string({ minLength: 1, maxLength: 64 })
      }),
      fc.record({
        _tag: fc.constant("Unassign" as const),
        slug: fc.stringMatching(/^[a-z0-9]+(-[a-z0-9]+)*$/).filter((slug) => slug.length <= 50),
        email: fc.emailAddress()
      }),
      fc.record({
        _tag: fc.constant("RetryAction" as const),
        decisionId: ulid,
        actionId: fc.string({ minLength: 1, maxLength: 64 })
      })
    )
    fc.assert(
      fc.property(addresses, (address) => {
        const id = actionId(address)
        assert.match(id, /^[A-Za-z0-9._~-]+$/)
        assert.deepStrictEqual(parseActionId(id), address)
      })
    )
    fc.assert(
      fc.property(fc.string(), (id) => {
        const address = parseActionId(id)
        if (address !== undefined) assert.strictEqual(actionId(address), id)
      })
    )
  })

  it("link labels cannot break out of markdown, and only https targets become links", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), fc.webUrl({ validSchemes: ["https"] }), (label, url) => {
        const line = markdownLinks([{ label: label.length === 0 ? "x" : label, url }])
        assert.match(line, /^- \[.*\]\(https:\/\/[^\s()<>]*\)$/s)
        assert.notMatch(escapeMarkdown(label), /(^|[^\\])[[\]()]/)
      })
    )
    assert.strictEqual(markdownLinks([{ label: "x", url: "javascript:alert(1)" }]), "- x")
  })
})

describe("the block schema", () => {
  const page = (blocks: ReadonlyArray<unknown>) => ({ id: "p", title: "P", blocks })
  it("accepts every block shape, tabs nested", () => {
    assert.isTrue(
      isPage(
        page([
          { type: "heading", text: "H", level: 2 },
          { type: "text", text: "*t*", format: "markdown" },
          { type: "stat", label: "L", value: "1" },
          { type: "statGroup", stats: [{ label: "L", value: "1" }] },
          { type: "list", items: [{ title: "T", href: "/apps/decisions/inbox?cursor=x" }] },
          { type: "table", columns: [{ key: "a", label: "A" }], rows: [{ a: "1", href: "/apps/x/y" }] },
          {
            type: "form",
            id: "f",
            fields: [{ name: "n", label: "N", type: "select", options: [{ value: "v", label: "V" }] }],
            submit: { label: "Go", actionId: "a.b" }
          },
          { type: "actionRow", actions: [{ actionId: "a", label: "A", style: "danger", confirm: "Sure?" }] },
          { type: "callout", tone: "warning", text: "W" },
          {
            type: "tabs",
            tabs: [{ label: "T", blocks: [{ type: "cards", cards: [{ title: "C", href: "/apps/a/b" }] }] }]
          }
        ])
      )
    )
  })
  it("refuses links to other origins, unknown types, bad action ids and bad field types", () => {
    for (const bad of [
      { type: "list", items: [{ title: "T", href: "https://evil.example/" }] },
      { type: "list", items: [{ title: "T", href: "//evil.example/" }] },
      { type: "table", columns: [], rows: [{ href: "javascript:alert(1)" }] },
      { type: "cards", cards: [{ title: "C", href: "/\\evil.example" }] },
      { type: "marquee", text: "x" },
      { type: "actionRow", actions: [{ actionId: "a/b", label: "A" }] },
      {
        type: "form",
        id: "f",
        fields: [{ name: "n", label: "N", type: "password" }],
        submit: { label: "S", actionId: "a" }
      },
      { type: "tabs", tabs: [{ label: "T", blocks: [{ type: "callout", tone: "loud", text: "x" }] }] }
    ]) {
      assert.isFalse(isPage(page([bad])), JSON.stringify(bad))
    }
  })
})

const orgNames = ["org_a", "org_b"] as const
const backends = [
  { name: "memory", runtime: () => ManagedRuntime.make(DecisionsMemory) },
  { name: "sql (PGlite)", runtime: () => ManagedRuntime.make(decisionsSqlOn(pglite)) }
]

describe.each(backends)("decision pages keep organizations apart (property, $name)", (backend) => {
  let runtime: ReturnType<typeof backend.runtime>
  beforeAll(() => {
    runtime = backend.runtime()
  })
  afterAll(() => runtime.dispose())

  it("no page, list or action of one organization shows or touches another's decision", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ org: fc.constantFrom(...orgNames), title: text(40) }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.tuple(fc.constantFrom(...orgNames), fc.nat(), fc.boolean()), { maxLength: 10 }),
        (specs, attempts) =>
          Effect.gen(function* () {
            const run = randomUUID().slice(0, 8)
            const orgOf = (name: string) => `${name}_${run}`
            const admin = (name: string): WorkspaceUser => ({
              organizationId: orgOf(name),
              email: `admin@${name}.test`,
              isAdmin: true
            })
            const decisions = yield* Decisions
            const pages = yield* DecisionPages
            for (const name of orgNames) {
              yield* decisions.createRole(admin(name), { slug: "ops", name: "Ops" })
              yield* decisions.assign(admin(name), "ops", admin(name).email)
            }
            const made: Array<Decision> = []
            for (const spec of specs) {
              const caller = { organizationId: orgOf(spec.org), callerName: "agent", keyId: "k" }
              made.push(
                (yield* decisions.create(caller, {
                  title: spec.title,
                  roleSlug: "ops",
                  options: [{ label: "Yes" }, { label: "No" }]
                })).decision
              )
            }
            const unknownId = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
            const missingPage = JSON.stringify(yield* Effect.exit(pages.page(admin("org_a"), `decision-${unknownId}`)))
            const missingAct = JSON.stringify(
              yield* Effect.exit(pages.act(admin("org_a"), `decision.${unknownId}.decline`, {}))
            )
            assert.include(missingPage, "NotFound")
            assert.include(missingAct, "NotFound")
            for (const name of orgNames) {
              for (const list of ["inbox", "all", "unrouted"]) {
                const doc = JSON.stringify(yield* pages.page(admin(name), list))
                for (const d of made) {
                  assert.strictEqual(doc.includes(d.id), d.organizationId === orgOf(name) && list !== "unrouted")
                }
              }
            }
            for (const [name, index, act] of attempts) {
              const target = made[index % made.length]!
              if (target.organizationId === orgOf(name)) continue
              const exit: Exit.Exit<unknown, unknown> = act
                ? yield* Effect.exit(pages.act(admin(name), `decision.${target.id}.decline`, {}))
                : yield* Effect.exit(pages.page(admin(name), `decision-${target.id}`))
              assert.isTrue(Exit.isFailure(exit))
              assert.strictEqual(JSON.stringify(exit), act ? missingAct : missingPage)
              const after = yield* decisions.get(target.organizationId, target.id)
              assert.strictEqual(after.decision.status, "pending")
            }
          }).pipe((effect) => runtime.runPromise(effect))
      ),
      { numRuns: 15 }
    )
  })
})
