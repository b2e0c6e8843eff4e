import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import { WebhookStoreMemory } from "../../adapters/memory/decisions/WebhookStoreMemory.ts"
import { WebhookStoreSql } from "../../adapters/sql/decisions/WebhookStoreSql.ts"
import { WebhookStore, type StoredWebhook } from "../../core/decisions/WebhookStore.ts"
import { sqlBackends } from "../support/Databases.ts"
import { decisionsSqlOn } from "./decisions-sql-layers.ts"

const webhook = (organizationId: string, id: string): StoredWebhook => ({
  id,
  organizationId,
  url: "https://hooks.example.com/decisions",
  sealedSecret: "v1.aaa.bbb",
  createdAt: "2030-01-01T10:00:00.000Z"
})

/** The WebhookStore port's contract (core/decisions/WebhookStore.ts), run once per adapter. */
const WebhookStoreContract = (name: string, store: Layer.Layer<WebhookStore, unknown>) =>
  describe(`WebhookStore contract (${name})`, () =>
    layer(store, { excludeTestServices: true })((it) => {
      it.effect("lists an organization's endpoints newest first, the secret kept as sealed", () =>
        Effect.gen(function* () {
          const store = yield* WebhookStore
          const [org, other] = [`org_${randomUUID()}`, `org_${randomUUID()}`]
          yield* store.create(webhook(org, `01A${randomUUID().slice(0, 8)}`))
          const second = webhook(org, `01B${randomUUID().slice(0, 8)}`)
          yield* store.create(second)
          yield* store.create(webhook(other, `01C${randomUUID().slice(0, 8)}`))
          const listed = yield* store.list(org)
          assert.deepStrictEqual(
            listed.map((w) => w.id),
            [second.id, listed[1]!.id]
          )
          assert.deepStrictEqual(listed[0], second)
          assert.strictEqual((yield* store.list(other)).length, 1)
        })
      )

      it.effect("disable is idempotent, keeps the first time, and another organization's id is absent", () =>
        Effect.gen(function* () {
          const store = yield* WebhookStore
          const org = `org_${randomUUID()}`
          const id = `01D${randomUUID().slice(0, 8)}`
          yield* store.create(webhook(org, id))
          const first = yield* store.disable(org, id, "2030-01-02T00:00:00.000Z")
          assert.strictEqual(first?.disabledAt, "2030-01-02T00:00:00.000Z")
          const again = yield* store.disable(org, id, "2030-01-03T00:00:00.000Z")
          assert.strictEqual(again?.disabledAt, "2030-01-02T00:00:00.000Z")
          assert.isUndefined(yield* store.disable(`org_${randomUUID()}`, id, "2030-01-04T00:00:00.000Z"))
          assert.isUndefined(yield* store.disable(org, "missing", "2030-01-04T00:00:00.000Z"))
        })
      )
    }))

WebhookStoreContract("memory", WebhookStoreMemory)
for (const backend of sqlBackends) WebhookStoreContract(backend.name, decisionsSqlOn(WebhookStoreSql, backend))
