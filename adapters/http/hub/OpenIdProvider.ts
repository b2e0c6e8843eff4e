import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Cause, Effect, Redacted, Schedule } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { createPrivateKey, hkdfSync } from "node:crypto"
import { IncomingMessage, type ServerResponse } from "node:http"
import Provider, {
  interactionPolicy,
  type AdapterFactory,
  type Configuration,
  type KoaContextWithOIDC
} from "oidc-provider"
import { Directory } from "../../../core/hub/Directory.ts"
import { failure, Readiness } from "../../../core/kernel/index.ts"
import { errorResponse, isOutage } from "../ErrorResponse.ts"
import { htmlPage } from "./SignInPages.ts"

/**
 * The hub as the OpenID provider of the platform's first-party web apps (`oidc-provider`, served on the hub's
 * own listener): discovery at `/.well-known/openid-configuration`, everything else under `/oidc/`. Only the
 * authorization code flow with PKCE; clients are registered from configuration. A person signed in at the
 * hub (cookie `hub_session`) is not asked again, and first-party apps get no consent screen; a person not
 * signed in is sent to the hub's sign-in and comes back. The hub's session is the truth: once it has ended,
 * or belongs to someone else, the provider's own session no longer counts. Codes, grants and interactions are
 * kept in SQL (sealed), so any instance can serve any step.
 */

export interface FirstPartyClient {
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  readonly redirectUris: ReadonlyArray<string>
}

export interface OpenIdProviderOptions {
  /** The hub's public address: the issuer. */
  readonly issuer: string
  /** PEM of the private key (RSA, or EC P-256) that signs ID tokens. */
  readonly signingKey: Redacted.Redacted<string>
  /** The hub's secrets key: seals stored artifacts and keys the provider's cookies. */
  readonly secretsKey: string
  readonly clients: ReadonlyArray<FirstPartyClient>
  /** Where a person not signed in is sent; `next` is added. */
  readonly signInPath: string
}

/**
 * Where the provider keeps what it issues (codes, sessions, grants), one oidc-provider adapter per model;
 * sealed under the secrets key it was made with. `purgeExpired` deletes what has expired and answers how many.
 */
export interface OidcArtifacts {
  readonly adapterFor: AdapterFactory
  readonly purgeExpired: Effect.Effect<number, unknown>
}

/** Who is signed in at the hub, from the value of the `hub_session` cookie. */
export type HubPersonOf<R> = (cookie: string) => Effect.Effect<{ readonly userId: string } | undefined, never, R>

export const hubSessionCookie = "hub_session"
const discoveryPath = "/.well-known/openid-configuration"
const interactionPrefix = "/oidc/interaction/"

const signingJwk = (pem: string) => {
  const key = createPrivateKey(pem)
  const jwk = key.export({ format: "jwk" })
  const alg: "RS256" | "ES256" | undefined =
    jwk.kty === "RSA" ? "RS256" : jwk.kty === "EC" && jwk.crv === "P-256" ? "ES256" : undefined
  if (alg === undefined) throw new Error("the OpenID signing key must be RSA or EC P-256")
  return { ...jwk, alg, use: "sig", kid: `hub-${alg.toLowerCase()}` }
}

/** A request whose body the router has already read, as a readable Node request again for the provider. */
const withBody = (original: IncomingMessage, body: string): IncomingMessage => {
  const copy = new IncomingMessage(original.socket)
  copy.method = original.method
  copy.url = original.url
  copy.headers = original.headers
  copy.rawHeaders = original.rawHeaders
  copy.httpVersion = original.httpVersion
  copy.httpVersionMajor = original.httpVersionMajor
  copy.httpVersionMinor = original.httpVersionMinor
  // Complete: destroying an incomplete message would close the connection it shares.
  copy.complete = true
  copy.push(Buffer.from(body, "utf8"))
  copy.push(null)
  return copy
}

const pageOf = (status: number, title: string, text: string) =>
  HttpServerResponse.text(htmlPage(title, text), { status, contentType: "text/html; charset=utf-8" })

/**
 * The provider's routes on the hub's router. Without `options` (no signing key or secrets key in production)
 * every route answers 501 NOT_CONFIGURED.
 */
export const openIdProviderRoutes = <R, A>(
  options: OpenIdProviderOptions | undefined,
  personOf: HubPersonOf<R>,
  artifactsFor: (secretsKey: string) => Effect.Effect<OidcArtifacts, never, A>
) =>
  HttpRouter.use(
    Effect.fnUntraced(function* (router) {
      if (options === undefined) {
        const off = Effect.succeed(
          errorResponse("NOT_CONFIGURED", { message: "The hub's OpenID provider is not configured." })
        )
        yield* router.add("*", discoveryPath, off)
        yield* router.add("*", "/oidc/*", off)
        return
      }
      const directory = yield* Directory
      const artifacts = yield* artifactsFor(options.secretsKey)
      // Expired codes, interactions and sessions are deleted hourly (they are never found once expired).
      yield* artifacts.purgeExpired.pipe(
        Effect.catchCause((cause) => Effect.logWarning("could not purge expired OpenID artifacts", cause)),
        Effect.delay("1 minute"),
        Effect.repeat(Schedule.spaced("1 hour")),
        Effect.forkScoped
      )
      const context = yield* Effect.context<R>()
      const run = <A>(effect: Effect.Effect<A, never, R>) => Effect.runPromiseWith(context)(effect)
      // Optional, as for the router's error middleware: without one, only a connection failure is an outage.
      const readiness = yield* Effect.serviceOption(Readiness)
      const outage = (cause: Cause.Cause<unknown>) =>
        Effect.tap(isOutage(cause, readiness), (down) =>
          down ? Effect.logWarning("the database cannot be reached", cause) : Effect.void
        )
      const provider = makeProvider(options, {
        adapter: artifacts.adapterFor,
        findUser: (id) => Effect.runPromise(directory.findUserById(id)),
        personOf: (cookie) => (cookie === undefined ? Promise.resolve(undefined) : run(personOf(cookie)))
      })
      answerOutages(provider, (error) => Effect.runPromise(outage(Cause.die(error))))
      const callback = provider.callback()

      const raw = Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const req = NodeHttpServerRequest.toIncomingMessage(request) as IncomingMessage
        const res = NodeHttpServerRequest.toServerResponse(request) as ServerResponse
        const body = request.method === "GET" || request.method === "HEAD" ? undefined : yield* request.text
        yield* Effect.callback<void>((resume) => {
          const done = () => resume(Effect.void)
          res.once("finish", done)
          res.once("close", done)
          void callback(body === undefined ? req : withBody(req, body), res)
        })
        // The provider answered on the Node response itself; the router sends nothing more.
        return HttpServerResponse.empty()
      }).pipe(Effect.catch(() => Effect.succeed(errorResponse("VALIDATION_ERROR"))))

      const interaction = Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const req = NodeHttpServerRequest.toIncomingMessage(request) as IncomingMessage
        const res = NodeHttpServerRequest.toServerResponse(request) as ServerResponse
        const details = yield* Effect.tryPromise(() => provider.interactionDetails(req, res))
        const hubCookie = request.cookies[hubSessionCookie]
        const person = hubCookie === undefined ? undefined : yield* personOf(hubCookie)
        if (person === undefined) {
          const next = `${interactionPrefix}${encodeURIComponent(details.uid)}`
          return HttpServerResponse.redirect(`${options.signInPath}?next=${encodeURIComponent(next)}`, {
            status: 303
          })
        }
        const returnTo = yield* Effect.tryPromise(() =>
          provider.interactionResult(
            req,
            res,
            { login: { accountId: person.userId } },
            { mergeWithLastSubmission: false }
          )
        )
        return HttpServerResponse.redirect(returnTo, { status: 303 })
      }).pipe(
        // A defect goes on to the router's error middleware, which decides the same way.
        Effect.catch((error) =>
          Effect.map(outage(Cause.fail(error)), (down) =>
            down
              ? errorResponse("UNAVAILABLE")
              : pageOf(
                  400,
                  "Sign-in expired",
                  "This sign-in has expired or was not started here. Start again from the app."
                )
          )
        )
      )

      yield* router.add("GET", discoveryPath, raw)
      yield* router.add("GET", `${interactionPrefix}:uid`, interaction)
      yield* router.add("*", "/oidc/*", raw)
    })
  )

/**
 * A server error of the provider while the database cannot be reached (its artifacts, the hub's sessions and
 * directory live there) is an outage: 503 UNAVAILABLE with the envelope every other route answers, instead of
 * the provider's 500 page, and service resumes by itself when the database is back. The decision is the one
 * of the router's error middleware (`isOutage`: a connection failure, or any failure while the ping fails);
 * other errors keep the provider's own answer.
 */
const answerOutages = (provider: Provider, outage: (error: unknown) => Promise<boolean>) => {
  const serverErrors = new WeakMap<object, unknown>()
  provider.on("server_error", (ctx: KoaContextWithOIDC, error: unknown) => void serverErrors.set(ctx, error))
  provider.use(async (ctx, next) => {
    let thrown: { readonly error: unknown } | undefined
    try {
      await next()
    } catch (error) {
      thrown = { error }
    }
    if (thrown === undefined && ctx.status < 500) return
    if (await outage(thrown?.error ?? serverErrors.get(ctx))) {
      ctx.status = 503
      ctx.type = "application/json"
      ctx.set("cache-control", "no-store")
      ctx.body = JSON.stringify(failure("UNAVAILABLE"))
      return
    }
    if (thrown !== undefined) throw thrown.error
  })
}

interface ProviderPorts {
  readonly adapter: AdapterFactory
  readonly findUser: (id: string) => Promise<{ readonly email: string; readonly name: string | null } | undefined>
  readonly personOf: (cookie: string | undefined) => Promise<{ readonly userId: string } | undefined>
}

const makeProvider = (options: OpenIdProviderOptions, ports: ProviderPorts) => {
  const jwk = signingJwk(Redacted.value(options.signingKey))
  const cookieKey = Buffer.from(
    hkdfSync("sha256", options.secretsKey, "hitl-hub", "oidc-provider cookies", 32)
  ).toString("base64url")
  const seconds = (n: number) => () => n

  // The hub's session decides: the provider's own session counts only while it is the same person's.
  const policy = interactionPolicy.base()
  policy.get("login")!.checks.add(
    new interactionPolicy.Check("hub_session", "The person is not signed in at the hub", async (ctx) => {
      const person = await ports.personOf(ctx.cookies.get(hubSessionCookie, { signed: false }) ?? undefined)
      return person === undefined || person.userId !== ctx.oidc.session?.accountId
        ? interactionPolicy.Check.REQUEST_PROMPT
        : interactionPolicy.Check.NO_NEED_TO_PROMPT
    })
  )

  const configuration: Configuration = {
    adapter: ports.adapter,
    clients: options.clients.map((client) => ({
      client_id: client.clientId,
      client_secret: Redacted.value(client.clientSecret),
      redirect_uris: [...client.redirectUris],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
      id_token_signed_response_alg: jwk.alg
    })),
    jwks: { keys: [jwk] },
    cookies: {
      names: { session: "hub_oidc_session", interaction: "hub_oidc_interaction", resume: "hub_oidc_resume" },
      keys: [cookieKey]
    },
    pkce: { required: () => true },
    responseTypes: ["code"],
    scopes: ["openid", "email", "profile"],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    // The first-party apps read who signed in from the ID token alone.
    conformIdTokenClaims: false,
    routes: {
      authorization: "/oidc/auth",
      token: "/oidc/token",
      jwks: "/oidc/jwks",
      userinfo: "/oidc/me",
      end_session: "/oidc/session/end",
      pushed_authorization_request: "/oidc/request",
      registration: "/oidc/reg",
      revocation: "/oidc/token/revocation",
      introspection: "/oidc/token/introspection",
      backchannel_authentication: "/oidc/backchannel",
      code_verification: "/oidc/device",
      device_authorization: "/oidc/device/auth",
      challenge: "/oidc/challenge",
      credential: "/oidc/credential"
    },
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      userinfo: { enabled: true }
    },
    interactions: { policy, url: (_ctx, interaction) => `${interactionPrefix}${interaction.uid}` },
    // First-party apps: the grant is the scopes they ask for, without a consent screen.
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const accountId = ctx.oidc.session?.accountId
      if (accountId === undefined || ctx.oidc.client === undefined) return undefined
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId })
      grant.addOIDCScope(String(ctx.oidc.params?.["scope"] ?? "openid"))
      await grant.save()
      return grant
    },
    findAccount: async (_ctx, sub) => {
      const user = await ports.findUser(sub)
      if (user === undefined) return undefined
      return {
        accountId: sub,
        // Everyone the hub signs in proved their email (an email link, or a provider that verified it).
        claims: () => ({ sub, email: user.email, email_verified: true, name: user.name ?? user.email })
      }
    },
    issueRefreshToken: () => false,
    clientBasedCORS: () => false,
    ttl: {
      AccessToken: seconds(600),
      AuthorizationCode: seconds(60),
      IdToken: seconds(600),
      Interaction: seconds(900),
      Session: seconds(14 * 24 * 3600),
      Grant: seconds(14 * 24 * 3600)
    },
    renderError: (ctx, out) => {
      ctx.type = "html"
      ctx.body = htmlPage(
        "Sign-in could not continue",
        `The sign-in could not continue (${String(out["error"] ?? "error")}). Start again from the app.`
      )
    }
  }
  const provider = new Provider(options.issuer, configuration)
  // Behind a load balancer that ends TLS, the forwarded protocol says the request was secure.
  provider.proxy = options.issuer.startsWith("https:")
  return provider
}
