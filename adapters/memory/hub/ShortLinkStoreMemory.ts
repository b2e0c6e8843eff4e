import { Effect, Layer } from "effect"
import { ShortLinkStore, type StoredShortLink } from "../../../core/hub/ShortLinks.ts"

/** The hub's short links in one process's memory (tests, embedding). */
export const ShortLinkStoreMemory = Layer.sync(ShortLinkStore, () => {
  const rows = new Map<string, StoredShortLink>()
  return ShortLinkStore.of({
    put: (link) =>
      Effect.sync(() => {
        if (!rows.has(link.code)) rows.set(link.code, { ...link })
        return rows.get(link.code)!.url
      }),
    find: (code) => Effect.sync(() => rows.get(code)?.url)
  })
})
