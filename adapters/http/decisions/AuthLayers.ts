import { Clock, Effect, Layer, Redacted } from "effect"
import { HttpServerRequest } from "effect/http"
import { verify as verifyIdentityToken } from "../../../core/auth/IdentityToken.ts"
import { checkStaticKey } from "../../../core/auth/StaticKey.ts"
import { CallerAuthentication } from "../../../core/decisions/CallerAuthentication.ts"
import { OrganizationStatuses } from "../../../core/events/OrganizationStatuses.ts"
import { OrganizationAdmins } from "../../../core/decisions/OrganizationAdmins.ts"
import { isoAt } from "../../../core/kernel/Timestamp.ts"
import { errorResponse } from "../ErrorResponse.ts"
import { IdempotencyScope } from "../IdempotencyMiddleware.ts"
import { RateLimits } from "../../../core/kernel/RateLimit.ts"
import { budgetRefusal } from "../RateLimits.ts"
import { CallerBudget } from "./CallerBudget.ts"
import { CallerAuth, CurrentCaller, CurrentUser, WorkspaceAuth } from "./Auth.ts"

export interface DecisionsAuthConfig {
  readonly production: boolean
  /** AUTH-1 key the hub sends on the workspace plane (`DECISIONS_API_KEY`). */
  readonly apiKey: Redacted.Redacted<string> | undefined
  /** HS256 key of workspace identity tokens (`DECISIONS_EMBED_KEY`). */
  readonly embedKey: Redacted.Redacted<string> | undefined
  readonly issuer: string
  /** Requests per minute per caller key and per workspace user. */
  readonly callerRequestsPerMinute: number
  readonly userRequestsPerMinute: number
}

const unauthorized = () => errorResponse("UNAUTHORIZED")

/**
 * Caller plane: the bearer key must hash to an active caller key; revoked or rotated-out keys fail at once.
 * Each request takes from the key's `CallerBudget`, which `/mcp` shares.
 */
export const CallerAuthLayer = (_config: DecisionsAuthConfig) =>
  Layer.effect(
    CallerAuth,
    Effect.gen(function* () {
      const callers = yield* CallerAuthentication
      const budget = yield* CallerBudget
      const limits = yield* RateLimits
      return CallerAuth.of({
        callerKey: (httpEffect, { credential }) =>
          Effect.gen(function* () {
            const caller = yield* callers.authenticate(Redacted.value(credential))
            if (caller === undefined) return unauthorized()
            const refused = yield* budgetRefusal(limits, budget, `key:${caller.keyId}`)
            if (refused !== undefined) return refused
            return yield* httpEffect.pipe(
              Effect.provideService(CurrentCaller, caller),
              Effect.provideService(IdempotencyScope, `caller:${caller.keyId}`)
            )
          })
      })
    })
  )

const adminRoles = new Set(["OWNER", "ADMIN"])

/**
 * Workspace plane: the service key and an identity token, both checked; the token's `sub` is the user and
 * its `companyId` the organization. A token without an organization cannot be scoped, so it is refused, as
 * is one of a suspended organization (core/events/OrganizationStatuses.ts).
 * What the token shows of the user's standing (admin or not) is noted for the notifications that go to
 * the organization's admins (core/decisions/OrganizationAdmins.ts).
 */
export const WorkspaceAuthLayer = (config: DecisionsAuthConfig) =>
  Layer.effect(
    WorkspaceAuth,
    Effect.gen(function* () {
      const admins = yield* OrganizationAdmins
      const statuses = yield* OrganizationStatuses
      const limits = yield* RateLimits
      const budget = {
        name: "decisions.user",
        limit: config.userRequestsPerMinute,
        windowMillis: 60_000,
        whenStoreFails: "local"
      } as const
      return WorkspaceAuth.of({
        workspaceToken: (httpEffect, { credential }) =>
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            const keyCheck = yield* Effect.result(
              checkStaticKey({
                expected: config.apiKey === undefined ? undefined : Redacted.value(config.apiKey),
                presented: request.headers["x-decisions-api-key"],
                production: config.production
              })
            )
            if (keyCheck._tag === "Failure") {
              return keyCheck.failure._tag === "NotConfigured"
                ? errorResponse("UNAVAILABLE", { message: "The service is not configured yet." })
                : unauthorized()
            }
            if (config.embedKey === undefined) {
              return config.production
                ? errorResponse("UNAVAILABLE", { message: "The service is not configured yet." })
                : unauthorized()
            }
            const identity = yield* Effect.result(
              verifyIdentityToken({
                token: Redacted.value(credential),
                key: Redacted.value(config.embedKey),
                issuer: config.issuer,
                audience: "decisions",
                nowSeconds: Math.floor((yield* Clock.currentTimeMillis) / 1000)
              })
            )
            if (identity._tag === "Failure" || identity.success.companyId === undefined) return unauthorized()
            // A suspended organization's people are refused as a bad token is, until it is active again.
            if (yield* statuses.organizationSuspended(identity.success.companyId)) return unauthorized()
            const user = {
              organizationId: identity.success.companyId,
              email: identity.success.email,
              isAdmin: identity.success.orgRole !== undefined && adminRoles.has(identity.success.orgRole)
            }
            const refused = yield* budgetRefusal(limits, budget, `${user.organizationId}:${user.email}`)
            if (refused !== undefined) return refused
            yield* admins.note(user.organizationId, user.email, user.isAdmin, isoAt(yield* Clock.currentTimeMillis))
            return yield* httpEffect.pipe(
              Effect.provideService(CurrentUser, user),
              Effect.provideService(IdempotencyScope, `user:${user.organizationId}:${user.email}`)
            )
          })
      })
    })
  )
