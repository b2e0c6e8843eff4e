import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { AnswerLinkUses } from "../../../core/decisions/AnswerByLink.ts"

/** The AnswerLinkUses port over `decisions.answer_link_uses` (0014_answer_link_uses.ts). SQL failures are defects. */
export const AnswerLinkUsesSql: Layer.Layer<AnswerLinkUses, never, SqlClient.SqlClient> = Layer.effect(
  AnswerLinkUses,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return AnswerLinkUses.of({
      isUsed: (nonce) =>
        sql<{ readonly one: number }>`SELECT 1 AS one FROM decisions.answer_link_uses WHERE nonce = ${nonce}`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        ),
      spend: (use) =>
        sql<{ readonly nonce: string }>`
          INSERT INTO decisions.answer_link_uses (nonce, decision_id, used_at)
          VALUES (${use.nonce}, ${use.decisionId}, ${use.atIso}::timestamptz)
          ON CONFLICT (nonce) DO NOTHING
          RETURNING nonce`.pipe(
          Effect.map((rows) => rows.length === 1),
          Effect.orDie
        )
    })
  })
)
