import { Effect, type Redacted } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { TaskAccess } from "../../../core/tasks/TaskAccess.ts"
import { isCrossSite } from "../CrossSite.ts"
import { cookieSecure, makeRelyingParty, type RelyingParty } from "../OidcRelyingParty.ts"
import { TasksApi } from "./Api.ts"
import { sessionCookie } from "./Auth.ts"
import { tasksError, tasksErrorResponse } from "./TasksErrors.ts"

/** How the task inbox signs people in: as a client of the hub's OpenID provider. */
export interface TasksWebSignIn {
  /** Where people reach the task inbox (TASKS_PUBLIC_URL); the callback is `<publicUrl>/auth/callback`. */
  readonly publicUrl: string
  /** The hub's issuer (its public address). */
  readonly hubIssuer: string
  readonly clientId: string
  /** TASKS_OIDC_CLIENT_SECRET; unset, web sign-in answers 501. */
  readonly clientSecret: Redacted.Redacted<string> | undefined
  /** TASKS_SECRETS_KEY seals the pending sign-in; unset, web sign-in answers 501. */
  readonly secretsKey: string | undefined
  /** Plain http to the hub (not in production). */
  readonly allowHttp: boolean
}

/** The cookie that carries a sign-in between `/auth/login` and `/auth/callback`. */
export const pendingSignInCookie = "tasks_sign_in"

const notConfigured = () => tasksError(501, "Web sign-in is not configured on this server")

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

/**
 * What a browser sent back to `/auth/callback` meets when the sign-in cannot finish: a plain page (no script,
 * the text escaped) with the way to start again, never a bare JSON error. A client that does not ask for HTML
 * gets the task inbox's error shape (`{"error": ...}`) with the same status.
 */
const signInFailure =
  (request: HttpServerRequest.HttpServerRequest) => (status: number, title: string, text: string, error: string) =>
    (request.headers["accept"] ?? "").includes("text/html")
      ? HttpServerResponse.text(
          `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
            `<title>${escapeHtml(title)}</title></head><body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>` +
            `<p><a href="/auth/login">Sign in again</a></p></main></body></html>`,
          { status, contentType: "text/html; charset=utf-8" }
        )
      : tasksError(status, error)

export const TasksSignInHandlers = (options: TasksWebSignIn) =>
  HttpApiBuilder.group(TasksApi, "signIn", (handlers) =>
    Effect.gen(function* () {
      const access = yield* TaskAccess
      const base = options.publicUrl.replace(/\/+$/, "")
      const secure = cookieSecure(base)
      const party: RelyingParty | undefined =
        options.clientSecret === undefined || options.secretsKey === undefined
          ? undefined
          : makeRelyingParty({
              issuer: options.hubIssuer,
              clientId: options.clientId,
              clientSecret: options.clientSecret,
              redirectUri: `${base}/auth/callback`,
              allowHttp: options.allowHttp,
              secretsKey: options.secretsKey,
              cookieName: pendingSignInCookie
            })
      const unavailable = () => tasksError(502, "The hub's sign-in is not responding. Retry later.")

      return handlers.handleAll({
        login: ({ query }) =>
          party === undefined
            ? Effect.succeed(notConfigured())
            : party.begin(query.next ?? "/").pipe(Effect.catch(() => Effect.succeed(unavailable()))),

        callback: () =>
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            const failure = signInFailure(request)
            if (party === undefined) {
              return failure(
                501,
                "Not set up",
                "Signing in to the task inbox is not set up on this server.",
                "Web sign-in is not configured on this server"
              )
            }
            const search = new URL(request.url, "http://callback").search
            const signedIn = yield* Effect.result(party.finish(search, request.cookies[pendingSignInCookie]))
            if (signedIn._tag === "Failure") {
              return party.clearPending(
                signedIn.failure._tag === "SignInUnavailable"
                  ? failure(
                      502,
                      "Sign-in unavailable",
                      "The hub's sign-in is not responding. Try again in a moment.",
                      "The hub's sign-in is not responding. Retry later."
                    )
                  : failure(
                      401,
                      "Sign-in failed",
                      "This sign-in could not be completed (it may have expired, or been started in another tab or at another address). Start again.",
                      "Sign-in failed: start again from the sign-in page"
                    )
              )
            }
            const { claims, next } = signedIn.success
            if (claims.email === undefined || !claims.emailVerified) {
              return party.clearPending(
                failure(
                  401,
                  "Sign-in failed",
                  "The hub did not confirm an email address for this account.",
                  "Sign-in failed: the hub did not vouch for an email"
                )
              )
            }
            const session = yield* access.startSession(claims.email, claims.name ?? claims.email)
            return party.clearPending(
              HttpServerResponse.redirect(next, { status: 303 }).pipe(
                HttpServerResponse.setCookieUnsafe(sessionCookie, session.cookie, {
                  httpOnly: true,
                  sameSite: "lax",
                  secure,
                  path: "/",
                  expires: new Date(session.expiresAt)
                })
              )
            )
          }).pipe(Effect.catch(tasksErrorResponse)),

        logout: () =>
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            if (isCrossSite(request, base)) return tasksError(403, "Cross-site request refused")
            yield* access.endSession(request.cookies[sessionCookie] ?? "")
            return HttpServerResponse.empty({ status: 204 }).pipe(
              HttpServerResponse.setCookieUnsafe(sessionCookie, "", {
                httpOnly: true,
                sameSite: "lax",
                secure,
                path: "/",
                maxAge: 0
              })
            )
          })
      })
    })
  )
