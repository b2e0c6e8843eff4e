import { Cause, Clock, Context, Effect, Layer, Schema } from "effect"
import { createHash } from "node:crypto"
import { isoAt } from "../kernel/Timestamp.ts"
import { Transactions } from "../kernel/Transactions.ts"

/** What a short link may point at: a closed set of namespaces, each a fixed path of the hub. */
export const ShortLinkKinds = ["recording"] as const
export type ShortLinkKind = (typeof ShortLinkKinds)[number]

/** A slug is an address, not a credential: 16 to 64 letters, digits, `_` and `-`. */
export const shortLinkSlugPattern = /^[A-Za-z0-9_-]{16,64}$/

const kindPaths: Readonly<Record<ShortLinkKind, string>> = { recording: "/recordings/" }

/** The hub's own short links, code to address. */
export interface StoredShortLink {
  readonly code: string
  readonly url: string
  readonly createdAt: string
}

/**
 * Where the hub's own shortener keeps its codes (the hub's database, so every instance follows every code).
 * `put` keeps the link unless the code is taken and answers the address the code names afterwards, so a
 * caller can tell its own link from another one that holds the code.
 */
export class ShortLinkStore extends Context.Service<
  ShortLinkStore,
  {
    readonly put: (link: StoredShortLink) => Effect.Effect<string>
    readonly find: (code: string) => Effect.Effect<string | undefined>
  }
>()("core/hub/ShortLinkStore") {}

/** A shortener could not shorten an address (off, unreachable, or an answer that is not a short link). */
export class ShortenFailed extends Schema.TaggedError<ShortenFailed>()("ShortenFailed", {
  cause: Schema.optionalKey(Schema.Defect())
}) {}

/** A link shortener: the hub's own (`ShortenerOwn`) or an external one (adapters/http/hub/ShortenerHttp.ts). */
export class Shortener extends Context.Service<
  Shortener,
  { readonly shorten: (url: string) => Effect.Effect<string, ShortenFailed> }
>()("core/hub/Shortener") {}

/**
 * A code is the first 11 characters of the address's SHA-256 in base64url (66 bits): the same address always
 * gets the same code, so a repeated call (a retry, two instances at once) answers the same link and writes
 * nothing new. Should another address ever hold the code, shortening fails and the long address is answered.
 */
export const shortCode = (url: string): string => createHash("sha256").update(url).digest("base64url").slice(0, 11)

/** The hub's own shortener: `{publicUrl}/s/{code}`, the code kept in `ShortLinkStore` (one unit of work). */
export const ShortenerOwn = (publicUrl: string): Layer.Layer<Shortener, never, ShortLinkStore | Transactions> =>
  Layer.effect(
    Shortener,
    Effect.gen(function* () {
      const store = yield* ShortLinkStore
      const transactions = yield* Transactions
      return Shortener.of({
        shorten: Effect.fn("ShortenerOwn.shorten")(function* (url: string) {
          const code = shortCode(url)
          const createdAt = isoAt(yield* Clock.currentTimeMillis)
          const kept = yield* transactions
            .atomically(store.put({ code, url, createdAt }))
            .pipe(Effect.catchDefect((cause) => Effect.fail(new ShortenFailed({ cause }))))
          if (kept !== url) return yield* new ShortenFailed({})
          return `${publicUrl}/s/${code}`
        })
      })
    })
  )

/** Shortening turned off: every address stays long. */
export const ShortenerOff: Layer.Layer<Shortener> = Layer.succeed(
  Shortener,
  Shortener.of({ shorten: () => Effect.fail(new ShortenFailed({})) })
)

export interface ShortLinkRequest {
  readonly kind: ShortLinkKind
  readonly slug: string
}

export interface ShortLink {
  readonly url: string
  readonly shortened: boolean
}

/**
 * A branded share link: the hub composes the address (its public URL and the kind's fixed path; the caller
 * proposes neither origin nor path) and shortens it. It never fails for a cosmetic reason: whatever goes
 * wrong while shortening (a failure, a defect), the answer is the long address with `shortened: false`.
 */
export const makeShortLink = Effect.fn("ShortLinks.make")(function* (publicUrl: string, request: ShortLinkRequest) {
  const shortener = yield* Shortener
  const long = `${publicUrl}${kindPaths[request.kind]}${request.slug}`
  return yield* shortener.shorten(long).pipe(
    Effect.map((url): ShortLink => ({ url, shortened: true })),
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.interrupt
        : Effect.as(Effect.logWarning("a short link was answered long: shortening failed"), {
            url: long,
            shortened: false
          } satisfies ShortLink)
    )
  )
})
