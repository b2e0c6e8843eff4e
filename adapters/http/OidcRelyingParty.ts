import { Effect, Redacted, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import * as client from "openid-client"
import { open, seal } from "../../core/auth/SecretBox.ts"

/**
 * Signing in at an OpenID provider as one of its clients (authorization code with PKCE, state and nonce), over
 * `openid-client`. The hub uses it towards the organisation's identity provider, the task inbox towards the
 * hub. What the flow must remember between the redirect and the callback travels in a short-lived cookie
 * sealed with the service's secrets key, so whichever instance receives the callback can finish it.
 */

export interface RelyingPartyOptions {
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  /** The callback address registered at the provider. */
  readonly redirectUri: string
  /** Plain http to the provider (development and tests on loopback only). */
  readonly allowHttp: boolean
  /** Seals the pending sign-in cookie. */
  readonly secretsKey: string
  /** The cookie that carries the pending sign-in; its path is the callback's. */
  readonly cookieName: string
  readonly scope?: string
}

/** The provider, or a check of its answer, refused the sign-in (wrong state or nonce, a code used twice...). */
export class SignInRefused extends Schema.TaggedError<SignInRefused>()("SignInRefused", {
  reason: Schema.String,
  cause: Schema.optionalKey(Schema.Defect())
}) {}

/** The provider could not be reached or answered with a server error: worth trying again later. */
export class SignInUnavailable extends Schema.TaggedError<SignInUnavailable>()("SignInUnavailable", {
  cause: Schema.optionalKey(Schema.Defect())
}) {}

/** What the provider vouches for, from its verified ID token. */
export interface SignedInClaims {
  readonly subject: string
  readonly email: string | undefined
  readonly emailVerified: boolean
  readonly name: string | undefined
}

const Pending = Schema.Struct({
  state: Schema.String,
  nonce: Schema.String,
  verifier: Schema.String,
  next: Schema.String,
  expiresAt: Schema.Number
})
type Pending = typeof Pending.Type
const decodePending = Schema.decodeUnknownOption(Schema.fromJsonString(Pending))

/** A sign-in must come back within ten minutes. */
const pendingMillis = 10 * 60 * 1000

const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]", "::1"])

/** Cookies are Secure unless the service is reached over plain http on loopback (development). */
export const cookieSecure = (publicUrl: string): boolean => {
  const url = new URL(publicUrl)
  return url.protocol === "https:" || !loopbackHosts.has(url.hostname)
}

/** A `next` the service may send a person to after signing in: a path of its own origin, never elsewhere. */
export const safeNext = (next: string | null | undefined): string =>
  typeof next === "string" && /^\/(?![/\\])[^\\\s]*$/.test(next) && next.length <= 2048 ? next : "/"

const isServerTrouble = (error: unknown) =>
  (error instanceof client.ResponseBodyError && error.status >= 500) ||
  error instanceof TypeError ||
  (error instanceof client.ClientError && error.code === "OAUTH_RESPONSE_IS_NOT_CONFORM") ||
  (error instanceof Error && error.name === "AbortError") ||
  (error instanceof Error && error.name === "TimeoutError")

export const makeRelyingParty = (options: RelyingPartyOptions) => {
  let discovered: client.Configuration | undefined
  const execute = options.allowHttp ? [client.allowInsecureRequests] : []
  const cookiePath = new URL(options.redirectUri).pathname
  const secure = cookieSecure(options.redirectUri)

  // Discovery is fetched once per process; a failure is not kept, so the next sign-in tries again.
  const configuration = Effect.tryPromise({
    try: async () =>
      (discovered ??= await client.discovery(
        new URL(options.issuer),
        options.clientId,
        undefined,
        client.ClientSecretBasic(Redacted.value(options.clientSecret)),
        { execute, timeout: 10 }
      )),
    catch: (cause) => new SignInUnavailable({ cause })
  })

  /** One Promise of openid-client: a refusal, unless the provider could not be reached. */
  const use = <A>(f: (config: client.Configuration) => Promise<A>) =>
    Effect.flatMap(configuration, (config) =>
      Effect.tryPromise({
        try: () => f(config),
        catch: (cause) =>
          isServerTrouble(cause)
            ? new SignInUnavailable({ cause })
            : new SignInRefused({ reason: "The identity provider's answer did not pass its checks.", cause })
      })
    )

  /** The redirect to the provider's authorization endpoint, with the pending sign-in's sealed cookie. */
  const begin = (next: string) =>
    Effect.gen(function* () {
      const pending: Pending = {
        state: client.randomState(),
        nonce: client.randomNonce(),
        verifier: client.randomPKCECodeVerifier(),
        next: safeNext(next),
        expiresAt: Date.now() + pendingMillis
      }
      const challenge = yield* use(() => client.calculatePKCECodeChallenge(pending.verifier))
      const url = yield* use(async (config) =>
        client.buildAuthorizationUrl(config, {
          redirect_uri: options.redirectUri,
          scope: options.scope ?? "openid email profile",
          code_challenge: challenge,
          code_challenge_method: "S256",
          state: pending.state,
          nonce: pending.nonce
        })
      )
      return HttpServerResponse.redirect(url.toString(), { status: 303 }).pipe(
        HttpServerResponse.setCookieUnsafe(options.cookieName, seal(options.secretsKey, JSON.stringify(pending)), {
          httpOnly: true,
          sameSite: "lax",
          secure,
          path: cookiePath,
          maxAge: `${pendingMillis} millis`
        })
      )
    })

  /**
   * The callback: the pending sign-in from its cookie, then the code exchanged with PKCE and the ID token
   * checked (signature, issuer, audience, expiry, nonce) by openid-client. Answers the verified claims and
   * where to go next.
   */
  const finish = (callbackSearch: string, cookieValue: string | undefined) =>
    Effect.gen(function* () {
      const opened = cookieValue === undefined ? undefined : open(options.secretsKey, cookieValue)
      const pending = opened === undefined ? undefined : decodePending(opened)
      if (pending === undefined || pending._tag === "None" || pending.value.expiresAt < Date.now()) {
        return yield* new SignInRefused({ reason: "This sign-in was not started here, or took too long." })
      }
      const { state, nonce, verifier, next } = pending.value
      const currentUrl = new URL(options.redirectUri)
      currentUrl.search = callbackSearch
      const tokens = yield* use((config) =>
        client.authorizationCodeGrant(config, currentUrl, {
          pkceCodeVerifier: verifier,
          expectedState: state,
          expectedNonce: nonce,
          idTokenExpected: true
        })
      )
      const claims = tokens.claims()
      if (claims === undefined) return yield* new SignInRefused({ reason: "The identity provider sent no ID token." })
      const signedIn: SignedInClaims = {
        subject: claims.sub,
        email: typeof claims["email"] === "string" ? claims["email"] : undefined,
        emailVerified: claims["email_verified"] === true,
        name: typeof claims["name"] === "string" ? claims["name"] : undefined
      }
      return { claims: signedIn, next }
    })

  /** Forgets the pending sign-in (set on every callback answer, success or not). */
  const clearPending = (response: HttpServerResponse.HttpServerResponse) =>
    HttpServerResponse.setCookieUnsafe(response, options.cookieName, "", {
      httpOnly: true,
      sameSite: "lax",
      secure,
      path: cookiePath,
      maxAge: 0
    })

  return { begin, finish, clearPending }
}

export type RelyingParty = ReturnType<typeof makeRelyingParty>
