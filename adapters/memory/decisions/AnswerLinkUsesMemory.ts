import { Effect, Layer } from "effect"
import { AnswerLinkUses } from "../../../core/decisions/AnswerByLink.ts"

/** The AnswerLinkUses port in memory. */
export const AnswerLinkUsesMemory = Layer.sync(AnswerLinkUses, () => {
  const used = new Set<string>()
  return AnswerLinkUses.of({
    isUsed: (nonce) => Effect.sync(() => used.has(nonce)),
    spend: (use) =>
      Effect.sync(() => {
        if (used.has(use.nonce)) return false
        used.add(use.nonce)
        return true
      })
  })
})
