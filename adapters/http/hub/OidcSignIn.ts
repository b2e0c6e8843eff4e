import { Effect, type Redacted } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { normalizeEmail } from "../../../core/kernel/Email.ts"
import { Directory } from "../../../core/hub/Directory.ts"
import { makeRelyingParty, type RelyingParty } from "../OidcRelyingParty.ts"
import { htmlPage } from "./SignInPages.ts"

/**
 * Signing in to the hub with the organisation's identity provider (the hub is its OpenID client):
 * `GET /auth/oidc?next=/path` starts an authorization code flow with PKCE, state and nonce;
 * `GET /auth/oidc/callback` checks the answer and the ID token, then starts the person's hub session and
 * sends them to `next` (default `/`). Only a person already in the directory, whose email the provider says
 * it verified, signs in.
 */

export interface OidcSignInOptions {
  /** The hub's public address; the callback is `<hubUrl>/auth/oidc/callback`. */
  readonly hubUrl: string
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  readonly secretsKey: string
  /** Plain http to the provider (not in production). */
  readonly allowHttp: boolean
}

/** Starts a hub session for a directory user and sets its cookie on the answer. */
export type StartHubSession<R> = (
  userId: string,
  response: HttpServerResponse.HttpServerResponse
) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>

export const pendingOidcCookie = "hub_oidc_sign_in"

const page = (status: number, title: string, text: string) =>
  HttpServerResponse.text(htmlPage(title, text), { status, contentType: "text/html; charset=utf-8" })

/**
 * The routes; without `options` (HUB_OIDC_ISSUER, HUB_OIDC_CLIENT_ID, HUB_OIDC_CLIENT_SECRET or the hub's
 * secrets key unset) both answer a 501 page.
 */
export const oidcSignInRoutes = <R>(options: OidcSignInOptions | undefined, startSession: StartHubSession<R>) =>
  HttpRouter.use(
    Effect.fnUntraced(function* (router) {
      if (options === undefined) {
        const off = Effect.succeed(
          page(501, "Not set up", "Signing in with your organisation's account is not set up on this hub.")
        )
        yield* router.add("GET", "/auth/oidc", off)
        yield* router.add("GET", "/auth/oidc/callback", off)
        return
      }
      const directory = yield* Directory
      const party: RelyingParty = makeRelyingParty({
        issuer: options.issuer,
        clientId: options.clientId,
        clientSecret: options.clientSecret,
        redirectUri: `${options.hubUrl.replace(/\/+$/, "")}/auth/oidc/callback`,
        allowHttp: options.allowHttp,
        secretsKey: options.secretsKey,
        cookieName: pendingOidcCookie
      })
      const unavailable = () =>
        page(502, "Sign-in unavailable", "Your organisation's sign-in is not responding. Try again in a moment.")

      const begin = Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const next = new URL(request.url, "http://hub").searchParams.get("next") ?? "/"
        return yield* party.begin(next)
      }).pipe(Effect.catch(() => Effect.succeed(unavailable())))

      const callback = Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const search = new URL(request.url, "http://hub").search
        const signedIn = yield* Effect.result(party.finish(search, request.cookies[pendingOidcCookie]))
        if (signedIn._tag === "Failure") {
          return signedIn.failure._tag === "SignInUnavailable"
            ? unavailable()
            : page(400, "Sign-in failed", "This sign-in could not be completed. Start again from the sign-in page.")
        }
        const { claims, next } = signedIn.success
        if (claims.email === undefined || !claims.emailVerified) {
          return page(
            403,
            "Email not verified",
            "Your organisation's sign-in did not confirm your email address, so the hub cannot sign you in."
          )
        }
        const user = yield* directory.findUserByEmail(normalizeEmail(claims.email))
        if (user === undefined) {
          return page(403, "No account", "There is no account for this email here. Ask your administrator to add you.")
        }
        return yield* startSession(user.id, HttpServerResponse.redirect(next, { status: 303 }))
      }).pipe(Effect.map(party.clearPending))

      yield* router.add("GET", "/auth/oidc", begin)
      yield* router.add("GET", "/auth/oidc/callback", callback)
    })
  )
