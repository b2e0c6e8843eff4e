import { Clock, Effect, Schema } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import type { VerifiedIdentity } from "../../core/auth/IdentityToken.ts"
import { open, seal } from "../../core/auth/SecretBox.ts"
import type { Unauthorized } from "../../core/kernel/Errors.ts"
import { errorResponse } from "./ErrorResponse.ts"

/**
 * A service's full-page embed (docs/pages.md, "Embedding"). The hub opens the embed URL with the person's
 * identity token as query `wt`. The service verifies it, answers a redirect to the same URL without `wt`
 * (so the token leaves the address bar, the history and any Referer at once) and sets an httpOnly cookie
 * holding the verified identity sealed with the service's secrets key: never the token itself. Later
 * requests read the identity from the cookie until it expires.
 */
export interface EmbedSessionConfig {
  /** The cookie's name, e.g. `decisions_embed`. */
  readonly cookieName: string
  /** The service's secrets key: it seals the cookie's value (AES-256-GCM, core/auth/SecretBox.ts). */
  readonly secretsKey: string
  /** Verifies an AUTH-4 token for this service (issuer, audience, key): core/auth/IdentityToken.ts `verify`. */
  readonly verify: (token: string, nowSeconds: number) => Effect.Effect<VerifiedIdentity, Unauthorized>
  /** How long the cookie lasts after the exchange; default 15 minutes. */
  readonly lifetimeSeconds?: number | undefined
  /** `Secure` on the cookie: on everywhere but plain http on loopback in development. */
  readonly secure: boolean
  /** The cookie's path; default `/`. */
  readonly path?: string | undefined
}

/** Who an embed session is for: the token's subject and organization, until `expiresAt` (unix seconds). */
export interface EmbedIdentity {
  readonly email: string
  readonly companyId: string | undefined
  readonly orgRole: string | undefined
  readonly expiresAt: number
}

const Sealed = Schema.fromJsonString(
  Schema.Struct({
    email: Schema.String,
    companyId: Schema.optionalKey(Schema.String),
    orgRole: Schema.optionalKey(Schema.String),
    expiresAt: Schema.Number
  })
)
const decodeSealed = Schema.decodeUnknownOption(Sealed)

const defaultLifetimeSeconds = 15 * 60

const nowSeconds = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))

const refusal = () =>
  HttpServerResponse.setHeaders(
    errorResponse("UNAUTHORIZED", { message: "Open this page from your workspace again." }),
    { "cache-control": "no-store", "referrer-policy": "no-referrer" }
  )

/**
 * When the request carries `wt`: a 303 to the same URL without it, setting the sealed session cookie when
 * the token verifies, or 401 when it does not (nothing is set). Without `wt`: undefined, the request goes on.
 */
export const exchangeEmbedToken = (
  config: EmbedSessionConfig
): Effect.Effect<HttpServerResponse.HttpServerResponse | undefined, never, HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const url = new URL(request.url, "http://embed.invalid")
    const tokens = url.searchParams.getAll("wt")
    if (tokens.length === 0) return undefined
    if (tokens.length !== 1) return refusal()
    const now = yield* nowSeconds
    const verified = yield* Effect.result(config.verify(tokens[0]!, now))
    if (verified._tag === "Failure") return refusal()
    url.searchParams.delete("wt")
    const identity = verified.success
    const lifetime = config.lifetimeSeconds ?? defaultLifetimeSeconds
    const sealed = seal(
      config.secretsKey,
      JSON.stringify({
        email: identity.email,
        ...(identity.companyId === undefined ? {} : { companyId: identity.companyId }),
        ...(identity.orgRole === undefined ? {} : { orgRole: identity.orgRole }),
        expiresAt: now + lifetime
      })
    )
    const location = `${url.pathname}${url.search}`
    return HttpServerResponse.redirect(location, {
      status: 303,
      headers: { "cache-control": "no-store", "referrer-policy": "no-referrer" }
    }).pipe(
      HttpServerResponse.setCookieUnsafe(config.cookieName, sealed, {
        httpOnly: true,
        sameSite: "lax",
        secure: config.secure,
        path: config.path ?? "/",
        maxAge: `${lifetime} seconds`
      })
    )
  })

/** The identity of the request's embed cookie, or undefined: missing, tampered, sealed under another key or expired. */
export const embedIdentity = (
  config: EmbedSessionConfig
): Effect.Effect<EmbedIdentity | undefined, never, HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const cookie = request.cookies[config.cookieName]
    if (cookie === undefined || cookie === "") return undefined
    const opened = open(config.secretsKey, cookie)
    if (opened === undefined) return undefined
    const decoded = decodeSealed(opened)
    if (decoded._tag === "None") return undefined
    const now = yield* nowSeconds
    if (decoded.value.expiresAt <= now) return undefined
    return {
      email: decoded.value.email,
      companyId: decoded.value.companyId,
      orgRole: decoded.value.orgRole,
      expiresAt: decoded.value.expiresAt
    }
  })

/**
 * An embeddable page: exchanges `wt` when present, then answers `page` for the cookie's identity, or 401
 * when there is none (the page was not opened from the workspace, or the session ended).
 */
export const embeddedPage =
  <E, R>(
    config: EmbedSessionConfig,
    page: (identity: EmbedIdentity) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ) =>
  (): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
    Effect.gen(function* () {
      const exchanged = yield* exchangeEmbedToken(config)
      if (exchanged !== undefined) return exchanged
      const identity = yield* embedIdentity(config)
      if (identity === undefined) return refusal()
      return yield* page(identity)
    })
