import { createServer, type Server } from "node:http"
import { generateKeyPairSync, randomBytes } from "node:crypto"
import Provider, { type Adapter, type AdapterPayload, type Configuration } from "oidc-provider"

/** The stand-in's storage: one map per model, as the provider's own memory store keeps it (without its warning). */
const memoryStorage = () => {
  const rows = new Map<string, AdapterPayload>()
  return (model: string): Adapter => {
    const key = (id: string) => `${model}:${id}`
    const findBy = (field: "uid" | "userCode", value: string) =>
      [...rows.entries()].find(([k, p]) => k.startsWith(`${model}:`) && p[field] === value)?.[1]
    return {
      upsert: async (id, payload) => void rows.set(key(id), payload),
      find: async (id) => rows.get(key(id)),
      findByUid: async (uid) => findBy("uid", uid),
      findByUserCode: async (userCode) => findBy("userCode", userCode),
      consume: async (id) => {
        const payload = rows.get(key(id))
        if (payload !== undefined) payload.consumed = Math.floor(Date.now() / 1000)
      },
      destroy: async (id) => void rows.delete(key(id)),
      revokeByGrantId: async (grantId) => {
        for (const [k, p] of rows) if (p.grantId === grantId) rows.delete(k)
      }
    }
  }
}

/** A person at the stand-in provider: who the next interaction signs in. */
export interface UpstreamAccount {
  readonly sub: string
  readonly email: string
  readonly emailVerified: boolean
  readonly name: string
}

export interface UpstreamClient {
  readonly clientId: string
  readonly clientSecret: string
  readonly redirectUri: string
}

export interface RunningProvider {
  readonly issuer: string
  /** The account the next sign-in at this provider is made as (the person typing their password there). */
  readonly signInAs: (account: UpstreamAccount) => void
  /** How many interactions (sign-in pages) the provider has shown. */
  readonly interactions: () => number
  readonly close: () => Promise<void>
}

/**
 * A real OpenID provider (`oidc-provider`) on an ephemeral loopback port, standing in for an organisation's
 * identity provider: authorization code with PKCE, ID tokens signed with its own key, its own memory store.
 * Only the person's part is automated: its sign-in page signs in the account given to `signInAs` at once.
 */
export const startOpenIdProvider = async (clients: ReadonlyArray<UpstreamClient>): Promise<RunningProvider> => {
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("expected an internet address")
  const issuer = `http://127.0.0.1:${address.port}`
  const accounts = new Map<string, UpstreamAccount>()
  let next: UpstreamAccount | undefined
  let shown = 0
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
  const quietTtl = (seconds: number) => () => seconds

  const configuration: Configuration = {
    adapter: memoryStorage(),
    clients: clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: [c.redirectUri],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      id_token_signed_response_alg: "ES256"
    })),
    jwks: { keys: [{ ...privateKey.export({ format: "jwk" }), kid: "upstream", alg: "ES256", use: "sig" }] },
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    pkce: { required: () => true },
    conformIdTokenClaims: false,
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    ttl: {
      AccessToken: quietTtl(600),
      IdToken: quietTtl(600),
      Interaction: quietTtl(600),
      Session: quietTtl(3600),
      Grant: quietTtl(3600)
    },
    findAccount: (_ctx, sub) => {
      const account = accounts.get(sub)
      if (account === undefined) return undefined
      return {
        accountId: sub,
        claims: () => ({
          sub,
          email: account.email,
          email_verified: account.emailVerified,
          name: account.name
        })
      }
    },
    renderError: (ctx, out) => {
      ctx.type = "json"
      ctx.body = out
    }
  }
  const provider = new Provider(issuer, configuration)
  const callback = provider.callback()

  server.on("request", (req, res) => {
    const url = new URL(req.url ?? "/", issuer)
    if (!url.pathname.startsWith("/interaction/")) return void callback(req, res)
    void (async () => {
      shown += 1
      const details = await provider.interactionDetails(req, res)
      const account = next
      if (account === undefined) {
        res.writeHead(409, { "content-type": "text/plain" }).end("nobody to sign in")
        return
      }
      accounts.set(account.sub, account)
      const grant = new provider.Grant({ accountId: account.sub, clientId: String(details.params["client_id"]) })
      grant.addOIDCScope(String(details.params["scope"]))
      const grantId = await grant.save()
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: account.sub }, consent: { grantId } },
        { mergeWithLastSubmission: false }
      )
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" }).end(String(error))
    })
  })

  return {
    issuer,
    signInAs: (account) => {
      next = account
    },
    interactions: () => shown,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
