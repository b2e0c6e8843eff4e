import { Effect, Layer, Redacted } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import { CurrentPerson, Sessions } from "../../../core/hub/Sessions.ts"
import { errorResponse } from "../ErrorResponse.ts"
import { isCrossSiteChange } from "../CrossSite.ts"
import { IdempotencyScope } from "../IdempotencyMiddleware.ts"
import { cookieSecure } from "../OidcRelyingParty.ts"

/** The hub's session cookie: an opaque secret whose hash names a server-side session. */
export const hubSessionCookie = "hub_session"

/**
 * A person signed in at the hub, from the `hub_session` cookie. Without a live session: 401 envelope. A
 * change (any method but GET, HEAD, OPTIONS) whose `Origin` (or, without one, `Referer`) names another site
 * is 403 FORBIDDEN: the browser sent the cookie, the person did not ask. Provides `CurrentPerson`, and the
 * person as the scope of their `Idempotency-Key`s.
 */
export class HubPersonAuth extends HttpApiMiddleware.Service<
  HubPersonAuth,
  { provides: CurrentPerson | IdempotencyScope }
>()("adapters/http/hub/HubPersonAuth", {
  security: { session: HttpApiSecurity.apiKey({ in: "cookie", key: hubSessionCookie }) }
}) {}

const cookieOptions = (publicUrl: string) => ({
  httpOnly: true,
  sameSite: "lax" as const,
  secure: cookieSecure(publicUrl),
  path: "/"
})

/** Sets the session cookie on a response (a new session's secret; it lives until the session's absolute end). */
export const withSessionCookie = (
  response: HttpServerResponse.HttpServerResponse,
  publicUrl: string,
  session: { readonly cookieValue: string; readonly expiresAt: string }
) =>
  HttpServerResponse.setCookieUnsafe(response, hubSessionCookie, session.cookieValue, {
    ...cookieOptions(publicUrl),
    expires: new Date(session.expiresAt)
  })

/** Clears the session cookie. */
export const withoutSessionCookie = (response: HttpServerResponse.HttpServerResponse, publicUrl: string) =>
  HttpServerResponse.setCookieUnsafe(response, hubSessionCookie, "", { ...cookieOptions(publicUrl), maxAge: 0 })

export const HubPersonAuthLayer = (config: { readonly publicUrl: string }) =>
  Layer.effect(
    HubPersonAuth,
    Effect.gen(function* () {
      const sessions = yield* Sessions
      return HubPersonAuth.of({
        session: (httpEffect, { credential }) =>
          Effect.gen(function* () {
            const cookie = Redacted.value(credential)
            const person = cookie.length === 0 ? undefined : yield* sessions.find(cookie)
            if (person === undefined) return errorResponse("UNAUTHORIZED", { message: "Sign in first." })
            const request = yield* HttpServerRequest.HttpServerRequest
            if (isCrossSiteChange(request, config.publicUrl)) {
              return errorResponse("FORBIDDEN", { message: "A change from another site's page is refused." })
            }
            return yield* httpEffect.pipe(
              Effect.provideService(CurrentPerson, person),
              Effect.provideService(IdempotencyScope, `person:${person.userId}`)
            )
          })
      })
    })
  )
