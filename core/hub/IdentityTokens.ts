import { Clock, Context, Effect, Layer } from "effect"
import { isoAt } from "../kernel/Timestamp.ts"
import { mint } from "../auth/IdentityToken.ts"
import { Forbidden, NotFound, type NotConfigured, ValidationError } from "../kernel/Errors.ts"
import { Hub } from "../kernel/Limits.ts"
import { Directory, orgStatus } from "./Directory.ts"
import { checkEmail } from "./IdentityRules.ts"
import { Registry } from "./Registry.ts"

export interface MintRequest {
  /** The target service's id: the token's audience, signed with that service's embed key. */
  readonly service: string
  readonly email: string
  /** The organization the token is scoped to; the user must be a member of it. */
  readonly companyId?: string | undefined
}

export interface MintedToken {
  readonly token: string
  /** When the token stops being accepted (ISO 8601). */
  readonly expiresAt: string
}

export interface IdentityTokensConfig {
  /** `PLATFORM_ISSUER`: the `iss` every service checks. */
  readonly issuer: string
}

/**
 * AUTH-4 identity tokens minted by the hub: HS256 with the target service's
 * embed key, `aud` the service id, `sub` the email, 300 s. The hub uses this whenever it calls a service for
 * a user; operators mint one for development. `companyId` is only ever an active organization the user belongs to,
 * and then the token carries the member's `orgRole` and the organization's `tier` (advisory claims).
 */
export class IdentityTokens extends Context.Service<
  IdentityTokens,
  {
    readonly mintFor: (
      request: MintRequest
    ) => Effect.Effect<MintedToken, NotFound | Forbidden | ValidationError | NotConfigured>
  }
>()("core/hub/IdentityTokens") {
  static readonly layer = (config: IdentityTokensConfig): Layer.Layer<IdentityTokens, never, Registry | Directory> =>
    Layer.effect(
      IdentityTokens,
      Effect.gen(function* () {
        const registry = yield* Registry
        const directory = yield* Directory
        return IdentityTokens.of({
          mintFor: Effect.fn("IdentityTokens.mintFor")(function* (request: MintRequest) {
            const email = checkEmail(request.email)
            if (email instanceof ValidationError) return yield* Effect.fail(email)
            const registered = yield* registry.credentials(request.service)
            if (registered === undefined) return yield* Effect.fail(new NotFound({ message: "No such service." }))
            const user = yield* directory.findUserByEmail(email)
            if (user === undefined) return yield* Effect.fail(new NotFound({ message: "No such user." }))
            const member =
              request.companyId === undefined
                ? undefined
                : (yield* directory.membershipsOf(user.id)).find((m) => m.org.id === request.companyId)
            if (request.companyId !== undefined && member === undefined) {
              return yield* Effect.fail(new Forbidden({ message: "The user is not a member of that organization." }))
            }
            // An archived, merged or deleted organization grants nothing (as in subject context and registry
            // authorization), so no token is scoped to it: a service would open that organization's data.
            if (member !== undefined && orgStatus(member.org) !== "active") {
              return yield* Effect.fail(new Forbidden({ message: "The organization is not active." }))
            }
            const nowSeconds = Math.floor((yield* Clock.currentTimeMillis) / 1000)
            const token = yield* mint({
              key: registered.credentials.embedKey,
              issuer: config.issuer,
              audience: registered.service.id,
              subject: user.email,
              companyId: request.companyId,
              orgRole: member?.membership.role,
              tier: member?.org.tier,
              nowSeconds,
              lifetimeSeconds: Hub.identityTokenLifetimeSeconds
            })
            return {
              token,
              expiresAt: isoAt((nowSeconds + Hub.identityTokenLifetimeSeconds) * 1000)
            }
          })
        })
      })
    )
}
