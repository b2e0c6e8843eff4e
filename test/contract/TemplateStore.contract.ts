import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import type { Template } from "../../core/decisions/Template.ts"
import { TemplateStore } from "../../core/decisions/TemplateStore.ts"

const freshOrganization = () => `org_${randomUUID()}`

const template = (slug: string, fields: Partial<Template> = {}): Template => ({
  id: `01TEMPLATE${slug.toUpperCase().padEnd(16, "0").slice(0, 16)}`,
  slug,
  name: `Template ${slug}`,
  roleSlug: "finance",
  titleTemplate: "Refund {{order}}?",
  bodyTemplate: "Customer **{{customer}}** — ünï ✓",
  urgency: "urgent",
  options: [
    {
      id: "opt_a",
      position: 0,
      label: "Refund",
      action: {
        type: "record_update",
        baseId: "appAAAAAAAAAAAAAA",
        tableId: "tblBBBBBBBBBBBBBB",
        recordIdParam: "recordId",
        fields: { Status: "Refunded by {{resolvedBy}}" }
      }
    },
    { id: "opt_b", position: 1, label: "Keep", description: "No refund" }
  ],
  createdAt: "2030-01-01T10:00:00.000Z",
  updatedAt: "2030-01-01T10:00:00.000Z",
  ...fields
})

/** The TemplateStore port's contract (core/decisions/TemplateStore.ts), run once per adapter. */
export const TemplateStoreContract = (name: string, store: Layer.Layer<TemplateStore, unknown>) =>
  describe(`TemplateStore contract (${name})`, () =>
    layer(store, { excludeTestServices: true })((it) => {
      it.effect("create then get and list round-trip the whole template; optional fields stay absent", () =>
        Effect.gen(function* () {
          const store = yield* TemplateStore
          const org = freshOrganization()
          const { bodyTemplate: _b, ...withoutBody } = template("b-two")
          assert.isTrue(yield* store.create(org, template("a-one")))
          assert.isTrue(yield* store.create(org, withoutBody))
          assert.deepStrictEqual(yield* store.get(org, "a-one"), template("a-one"))
          assert.deepStrictEqual(yield* store.get(org, "b-two"), withoutBody)
          assert.deepStrictEqual(
            (yield* store.list(org)).map((t) => t.slug),
            ["a-one", "b-two"]
          )
        })
      )

      it.effect("a taken slug is refused and the first template stays", () =>
        Effect.gen(function* () {
          const store = yield* TemplateStore
          const org = freshOrganization()
          yield* store.create(org, template("dup"))
          assert.isFalse(yield* store.create(org, template("dup", { name: "Second" })))
          assert.strictEqual((yield* store.get(org, "dup"))?.name, "Template dup")
        })
      )

      it.effect("replace writes the whole template; a missing one is not created", () =>
        Effect.gen(function* () {
          const store = yield* TemplateStore
          const org = freshOrganization()
          yield* store.create(org, template("t"))
          const next = template("t", { name: "Renamed", archivedAt: "2030-01-02T00:00:00.000Z", options: [] })
          assert.isTrue(yield* store.replace(org, next))
          assert.deepStrictEqual(yield* store.get(org, "t"), next)
          assert.isFalse(yield* store.replace(org, template("missing")))
          assert.isUndefined(yield* store.get(org, "missing"))
        })
      )

      it.effect("organizations are apart: the same slug in two organizations names two templates", () =>
        Effect.gen(function* () {
          const store = yield* TemplateStore
          const [a, b] = [freshOrganization(), freshOrganization()]
          yield* store.create(a, template("same"))
          assert.isUndefined(yield* store.get(b, "same"))
          assert.deepStrictEqual(yield* store.list(b), [])
          assert.isTrue(yield* store.create(b, template("same", { name: "B's" })))
          assert.strictEqual((yield* store.get(a, "same"))?.name, "Template same")
        })
      )
    }))
