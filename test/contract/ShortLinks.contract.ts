import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomBytes } from "node:crypto"
import { ShortLinkStore, Shortener } from "../../core/hub/ShortLinks.ts"

const freshCode = () => randomBytes(8).toString("base64url")
const freshAddress = () => `https://hub.example.test/recordings/${randomBytes(12).toString("base64url")}`
const at = "2030-01-01T10:00:00.000Z"

/** The ShortLinkStore port's contract (core/hub/ShortLinks.ts), run once per adapter. */
export const ShortLinkStoreContract = (name: string, store: Layer.Layer<ShortLinkStore, unknown>) =>
  describe(`ShortLinkStore contract (${name})`, () =>
    layer(store, { excludeTestServices: true })((it) => {
      it.effect("keeps a code's address and finds it; an unknown code has none", () =>
        Effect.gen(function* () {
          const links = yield* ShortLinkStore
          const code = freshCode()
          const url = freshAddress()
          assert.strictEqual(yield* links.put({ code, url, createdAt: at }), url)
          assert.strictEqual(yield* links.find(code), url)
          assert.isUndefined(yield* links.find(freshCode()))
        })
      )

      it.effect("never moves a code: putting it again answers the address it already names", () =>
        Effect.gen(function* () {
          const links = yield* ShortLinkStore
          const code = freshCode()
          const url = freshAddress()
          yield* links.put({ code, url, createdAt: at })
          assert.strictEqual(yield* links.put({ code, url, createdAt: at }), url)
          assert.strictEqual(yield* links.put({ code, url: freshAddress(), createdAt: at }), url)
          assert.strictEqual(yield* links.find(code), url)
        })
      )

      it.effect("keeps codes apart by case, byte for byte", () =>
        Effect.gen(function* () {
          const links = yield* ShortLinkStore
          const code = `aB${freshCode()}`
          const [upper, lower] = [freshAddress(), freshAddress()]
          yield* links.put({ code, url: upper, createdAt: at })
          yield* links.put({ code: code.toLowerCase(), url: lower, createdAt: at })
          assert.strictEqual(yield* links.find(code), upper)
          assert.strictEqual(yield* links.find(code.toLowerCase()), lower)
        })
      )
    }))

/**
 * The Shortener port's contract (core/hub/ShortLinks.ts), run once per adapter: `working` shortens, `down`
 * (when the adapter can be down: a database or a service it cannot reach) fails with ShortenFailed.
 */
export const ShortenerContract = (
  name: string,
  working: Layer.Layer<Shortener, unknown>,
  down?: Layer.Layer<Shortener, unknown>
) =>
  describe(`Shortener contract (${name})`, () => {
    layer(working, { excludeTestServices: true })((it) => {
      it.effect("shortens an address to an absolute http(s) address, the same one each time", () =>
        Effect.gen(function* () {
          const shortener = yield* Shortener
          const url = freshAddress()
          const short = yield* shortener.shorten(url)
          assert.match(short, /^https?:\/\/[^/]+\/\S+$/)
          assert.isBelow(short.length, url.length)
          assert.strictEqual(yield* shortener.shorten(url), short)
        })
      )

      it.effect("gives different addresses different short links", () =>
        Effect.gen(function* () {
          const shortener = yield* Shortener
          const links = yield* Effect.forEach([freshAddress(), freshAddress(), freshAddress()], shortener.shorten)
          assert.strictEqual(new Set(links).size, 3)
        })
      )
    })
    if (down !== undefined) {
      layer(down, { excludeTestServices: true })((it) => {
        it.effect("fails with ShortenFailed when it cannot shorten", () =>
          Effect.gen(function* () {
            const failure = yield* Effect.flip((yield* Shortener).shorten(freshAddress()))
            assert.strictEqual(failure._tag, "ShortenFailed")
          })
        )
      })
    }
  })
