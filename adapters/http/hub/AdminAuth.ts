import { Effect, Layer, Redacted } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import { constantTimeEqual } from "../../../core/auth/StaticKey.ts"
import { errorResponse } from "../ErrorResponse.ts"
import { IdempotencyScope } from "../IdempotencyMiddleware.ts"

/**
 * The hub's operator plane, `/api/v1/admin/*`: `Authorization: Bearer <HUB_ADMIN_KEY>`, compared in constant
 * time. Fails closed: without a configured key every operator route answers 501 NOT_CONFIGURED (the platform contract,
 * "A service without a configured key ... fails closed (501 on hub routes)").
 */
export class HubAdminAuth extends HttpApiMiddleware.Service<HubAdminAuth, { provides: IdempotencyScope }>()(
  "adapters/http/hub/HubAdminAuth",
  { security: { hubAdminKey: HttpApiSecurity.bearer } }
) {}

export const HubAdminAuthLayer = (config: { readonly adminKey: Redacted.Redacted<string> | undefined }) =>
  Layer.succeed(HubAdminAuth)({
    hubAdminKey: (httpEffect, { credential }) => {
      const expected = config.adminKey === undefined ? "" : Redacted.value(config.adminKey)
      if (expected.length === 0) {
        return Effect.succeed(errorResponse("NOT_CONFIGURED", { message: "The operator API is not configured." }))
      }
      const presented = Redacted.value(credential)
      return presented.length > 0 && constantTimeEqual(presented, expected)
        ? Effect.provideService(httpEffect, IdempotencyScope, "operator")
        : Effect.succeed(errorResponse("UNAUTHORIZED"))
    }
  })
