import { assert, describe, layer as withLayer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { AnswerLinkUsesMemory } from "../../adapters/memory/decisions/AnswerLinkUsesMemory.ts"
import { TransactionsMemory } from "../../adapters/memory/TransactionsMemory.ts"
import { AnswerLinkUsesSql } from "../../adapters/sql/decisions/AnswerLinkUsesSql.ts"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import { AnswerLinkUses } from "../../core/decisions/AnswerByLink.ts"
import { Transactions } from "../../core/kernel/Transactions.ts"
import { sqlBackends } from "../support/Databases.ts"
import { decisionsSqlOn } from "./decisions-sql-layers.ts"

const use = (nonce: string) => ({ nonce, decisionId: "01J00000000000000000000000", atIso: "2030-01-01T00:00:00.000Z" })

const contract = (name: string, layer: Layer.Layer<AnswerLinkUses | Transactions, unknown>, undoes: boolean) =>
  describe(`AnswerLinkUses (${name})`, () =>
    withLayer(layer, { excludeTestServices: true })((it) => {
      it.effect("a nonce is spent once: the second spend answers false", () =>
        Effect.gen(function* () {
          const uses = yield* AnswerLinkUses
          const nonce = randomUUID()
          assert.isFalse(yield* uses.isUsed(nonce))
          assert.isTrue(yield* uses.spend(use(nonce)))
          assert.isTrue(yield* uses.isUsed(nonce))
          assert.isFalse(yield* uses.spend(use(nonce)))
          assert.isFalse(yield* uses.isUsed(randomUUID()))
        })
      )

      if (undoes) {
        it.effect("a spend in a unit that fails is undone with it (the answer it went with is too)", () =>
          Effect.gen(function* () {
            const uses = yield* AnswerLinkUses
            const transactions = yield* Transactions
            const nonce = randomUUID()
            const failed = yield* Effect.result(
              transactions.atomically(Effect.andThen(uses.spend(use(nonce)), Effect.fail("the answer was refused")))
            )
            assert.strictEqual(failed._tag, "Failure")
            assert.isFalse(yield* uses.isUsed(nonce))
            assert.isTrue(yield* uses.spend(use(nonce)))
          })
        )

        it.effect("two units spending one nonce at once: exactly one gets it", () =>
          Effect.gen(function* () {
            const uses = yield* AnswerLinkUses
            const transactions = yield* Transactions
            const nonce = randomUUID()
            const spent = yield* Effect.all(
              Array.from({ length: 4 }, () =>
                transactions.atomically(Effect.tap(uses.spend(use(nonce)), () => Effect.sleep("20 millis")))
              ),
              { concurrency: "unbounded" }
            )
            assert.deepStrictEqual(
              spent.filter((s) => s),
              [true]
            )
          })
        )
      }
    }))

contract("memory", Layer.merge(AnswerLinkUsesMemory, TransactionsMemory), false)
for (const backend of sqlBackends) {
  contract(backend.name, decisionsSqlOn(Layer.merge(AnswerLinkUsesSql, TransactionsSql), backend), true)
}
