import { Effect, Layer, Option } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { ContextKeys } from "../../../core/hub/ContextKeys.ts"
import { Directory, orgStatus } from "../../../core/hub/Directory.ts"
import { CurrentPerson, Sessions } from "../../../core/hub/Sessions.ts"
import {
  callbackPath,
  isBrowserNonce,
  maxEmailLinkMillis,
  newBrowserNonce,
  SignInLinks
} from "../../../core/hub/SignInLinks.ts"
import { hashSecret } from "../../../core/auth/IssuedSecret.ts"
import { ViewerLinks } from "../../../core/hub/ViewerLinks.ts"
import { normalizeEmail } from "../../../core/kernel/Email.ts"
import { isRootRelativePath } from "../../../core/kernel/RootRelativePath.ts"
import { hubErrorResponse, errorResponse } from "../ErrorResponse.ts"
import { RateLimits } from "../../../core/kernel/RateLimit.ts"
import { CurrentContextCaller } from "./ContextApi.ts"
import { isCrossSiteChange } from "../CrossSite.ts"
import { cookieSecure } from "../OidcRelyingParty.ts"
import { hubSessionCookie, withoutSessionCookie, withSessionCookie } from "./PersonAuth.ts"
import { confirmationHeaders, confirmSignInPage } from "./SignInPages.ts"
import { SignInApi } from "./SignInApi.ts"
import { ServiceDataChangeAuth } from "./ViewerLinkApi.ts"
import { contextSignatureCheck } from "./ContextSignature.ts"

export interface EmailSignInHttpConfig {
  /** Where people's browsers reach the hub (HUB_PUBLIC_URL). */
  readonly publicUrl: string
  /**
   * Links one client may ask for one address, and for any addresses, per window: shared by every instance on
   * the same rate-limit store, and refused (503) while that store cannot answer. The first is counted per
   * client and address together, so no client's requests ever use up another client's budget for an address
   * (what the person is sent is capped apart, per hour, whoever asks: SignInLinks).
   */
  readonly perAddress: number
  readonly perClient: number
  readonly windowMillis: number
}

const noStore = { "cache-control": "no-store", "referrer-policy": "no-referrer" }

/**
 * The asking browser's sign-in nonce (HttpOnly, SameSite=Lax, under /auth/email, as long as a link lives): the
 * links it asks for keep the nonce's hash, and open at once only where the cookie is.
 */
export const signInNonceCookie = "hub_sign_in"

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

/** A small page for a browser that opened a link that cannot sign in; nothing it shows comes from the request. */
const linkRefusedPage = (message: string) =>
  HttpServerResponse.text(
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Sign-in link not valid</title>` +
      `<meta name="viewport" content="width=device-width, initial-scale=1"></head>\n` +
      `<body><main><h1>This sign-in link cannot be used</h1><p>${escapeHtml(message)}</p>` +
      `<p><a href="/">Ask for a new link</a></p></main></body></html>\n`,
    {
      status: 401,
      contentType: "text/html; charset=utf-8",
      headers: {
        ...noStore,
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'"
      }
    }
  )

const refusedMessage =
  "It has expired, it was used already, or it was not copied whole. A link works once, for a few minutes."

const wantsHtml = (request: HttpServerRequest.HttpServerRequest) =>
  (request.headers["accept"] ?? "").includes("text/html")

const isFormPost = (request: HttpServerRequest.HttpServerRequest) =>
  (request.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded") ||
  (wantsHtml(request) && !(request.headers["accept"] ?? "").includes("application/json"))

/**
 * `POST /auth/email`, `GET /auth/email/callback` (and the `POST` of its confirmation form), `POST /auth/logout`.
 * Needs SignInLinks and Sessions.
 */
export const EmailSignInHandlers = (config: EmailSignInHttpConfig) =>
  HttpApiBuilder.group(SignInApi, "emailSignIn", (handlers) =>
    Effect.gen(function* () {
      const links = yield* SignInLinks
      const sessions = yield* Sessions
      const limits = yield* RateLimits
      const rule = { windowMillis: config.windowMillis, whenStoreFails: "refuse" } as const
      const perClientAndAddress = { ...rule, name: "hub.sign-in.client-address", limit: config.perAddress }
      const perClient = { ...rule, name: "hub.sign-in.client", limit: config.perClient }
      const publicUrl = config.publicUrl

      const refused = (request: HttpServerRequest.HttpServerRequest) =>
        wantsHtml(request)
          ? linkRefusedPage(refusedMessage)
          : errorResponse("UNAUTHORIZED", {
              message: `This sign-in link cannot be used. ${refusedMessage}`,
              headers: noStore
            })

      /** Spends the link, starts the session and lands; the session the browser had before (if any) is ended. */
      const signIn = (request: HttpServerRequest.HttpServerRequest, token: string, next: string | undefined) =>
        Effect.gen(function* () {
          const signedIn = yield* Effect.result(links.redeem(token))
          if (signedIn._tag === "Failure") return refused(request)
          // The new session never reuses the id of one the browser had before.
          const previous = request.cookies[hubSessionCookie]
          if (previous !== undefined && previous.length > 0) yield* sessions.end(previous)
          const landing = signedIn.success.next ?? (next !== undefined && isRootRelativePath(next) ? next : "/")
          return withSessionCookie(
            HttpServerResponse.redirect(landing, { status: 303, headers: noStore }),
            publicUrl,
            signedIn.success.session
          )
        })

      return handlers
        .handle("request", ({ payload }) =>
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            const client = Option.getOrElse(request.remoteAddress, () => "unknown")
            // Both budgets are spent by every request, known address or not, so a 429 tells nothing either. The
            // store keeps only a hash of each key.
            const [byClient, byAddress] = yield* Effect.all(
              [
                Effect.result(limits.take(perClient, client)),
                Effect.result(limits.take(perClientAndAddress, `${client}\n${normalizeEmail(payload.email)}`))
              ],
              { concurrency: 2 }
            )
            const refusals = [byClient, byAddress].flatMap((taken) => (taken._tag === "Failure" ? [taken.failure] : []))
            if (refusals.some((refusal) => refusal._tag === "Unavailable")) {
              return errorResponse("UNAVAILABLE", { headers: { "retry-after": "30" } })
            }
            const wait = Math.max(
              0,
              ...refusals.map((refusal) => (refusal._tag === "RateLimited" ? refusal.retryAfterSeconds : 0))
            )
            if (wait > 0) {
              return errorResponse("RATE_LIMITED", {
                message: "Too many sign-in links asked for. Wait a little, then ask again.",
                headers: { "retry-after": String(wait) }
              })
            }
            // The link will be bound to this browser: a nonce it already holds is kept, so every link it asked
            // for opens here at once.
            const held = request.cookies[signInNonceCookie]
            const nonce = held !== undefined && isBrowserNonce(held) ? held : newBrowserNonce().plaintext
            yield* links.requestEmailLink(payload.email, payload.next, hashSecret(nonce))
            return HttpServerResponse.setCookieUnsafe(
              HttpServerResponse.jsonUnsafe({ data: { status: "sent" } }, { status: 202, headers: noStore }),
              signInNonceCookie,
              nonce,
              {
                httpOnly: true,
                sameSite: "lax",
                secure: cookieSecure(publicUrl),
                path: "/auth/email",
                maxAge: `${maxEmailLinkMillis} millis`
              }
            )
          }).pipe(Effect.catch(hubErrorResponse))
        )
        .handle("callback", ({ query }) =>
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            const token = query.token ?? ""
            const preview = yield* Effect.result(links.preview(token, request.cookies[signInNonceCookie]))
            if (preview._tag === "Failure") return refused(request)
            const link = preview.success
            const cookie = request.cookies[hubSessionCookie]
            const current = cookie !== undefined && cookie.length > 0 ? yield* sessions.find(cookie) : undefined
            const someoneElse = current !== undefined && current.userId !== link.userId ? current : undefined
            // The browser that asked signs in at once; a viewer link too, unless it would end another person's
            // session. Anywhere else the link is not spent: the person is asked first, by a form of this page.
            if (link.askedHere || (link.purpose === "viewer" && someoneElse === undefined)) {
              return yield* signIn(request, token, query.next)
            }
            return HttpServerResponse.text(
              confirmSignInPage({
                action: callbackPath,
                account: link.email,
                signedInAs: someoneElse?.email,
                fields: query.next === undefined ? { token } : { token, next: query.next }
              }),
              { status: 200, contentType: "text/html; charset=utf-8", headers: confirmationHeaders }
            )
          })
        )
        .handle("confirm", ({ payload }) =>
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            if (isCrossSiteChange(request, publicUrl)) {
              return errorResponse("FORBIDDEN", { message: "A change from another site's page is refused." })
            }
            return yield* signIn(request, payload.token, payload.next)
          })
        )
        .handle("logout", () =>
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            if (isCrossSiteChange(request, publicUrl)) {
              return errorResponse("FORBIDDEN", { message: "A change from another site's page is refused." })
            }
            const cookie = request.cookies[hubSessionCookie]
            if (cookie !== undefined && cookie.length > 0) yield* sessions.end(cookie)
            const answer = isFormPost(request)
              ? HttpServerResponse.redirect("/", { status: 303, headers: noStore })
              : HttpServerResponse.empty({ status: 204, headers: noStore })
            return withoutSessionCookie(answer, publicUrl)
          })
        )
    })
  )

/** `GET /api/v1/me`: the person and the organizations they belong to (deleted ones left out). */
export const MeHandlers = HttpApiBuilder.group(SignInApi, "me", (handlers) =>
  Effect.gen(function* () {
    const directory = yield* Directory
    return handlers.handle("me", () =>
      Effect.gen(function* () {
        const person = yield* CurrentPerson
        const memberships = yield* directory.membershipsOf(person.userId)
        return {
          data: {
            user: { email: person.email, name: person.name },
            organizations: memberships
              .filter((m) => orgStatus(m.org) !== "deleted")
              .map((m) => ({ id: m.org.id, name: m.org.name, role: m.membership.role }))
          }
        }
      })
    )
  })
)

export interface ViewerLinkHttpConfig {
  /** The parsed `HUB_CONTEXT_KEYS`; without keys the route answers 501. */
  readonly contextKeys: ContextKeys
  /** Per-caller quota, a minute, shared by every instance on the same rate-limit store. */
  readonly requestsPerMinute: number
}

/** Only the meeting-recaps service may ask for viewer links; it signs the raw body (ContextSignature.ts). */
const ServiceDataChangeAuthLayer = (config: ViewerLinkHttpConfig) =>
  Layer.effect(
    ServiceDataChangeAuth,
    Effect.map(
      contextSignatureCheck({
        contextKeys: config.contextKeys,
        requestsPerMinute: config.requestsPerMinute,
        budget: "hub.viewer-link",
        admits: (caller) => caller === "meeting-recaps",
        notConfigured: "The service-data plane is not configured."
      }),
      (check) =>
        ServiceDataChangeAuth.of({
          contextSignature: (httpEffect, { credential }) =>
            Effect.flatMap(check(credential), (outcome) =>
              outcome === "meeting-recaps"
                ? Effect.provideService(httpEffect, CurrentContextCaller, outcome)
                : Effect.succeed(typeof outcome === "string" ? errorResponse("UNAUTHORIZED") : outcome)
            )
        })
    )
  )

/** `POST /api/v1/service-data/viewer-link` with its signature middleware. Needs ViewerLinks. */
export const ViewerLinkHandlers = (config: ViewerLinkHttpConfig) =>
  HttpApiBuilder.group(SignInApi, "viewerLink", (handlers) =>
    Effect.gen(function* () {
      const viewerLinks = yield* ViewerLinks
      return handlers.handle("issue", ({ payload }) =>
        viewerLinks.issue(payload).pipe(
          Effect.map((link) => ({ data: link })),
          Effect.catch(hubErrorResponse)
        )
      )
    })
  ).pipe(Layer.provide(ServiceDataChangeAuthLayer(config)))
