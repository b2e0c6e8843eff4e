import { Clock, Context, Effect, Layer } from "effect"
import { hashSecret } from "../auth/IssuedSecret.ts"
import { OrganizationStatuses } from "../events/OrganizationStatuses.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { CallerKeyStore } from "./CallerKeyStore.ts"
import type { CallerIdentity } from "./DecisionAdmin.ts"

/**
 * The caller plane's credential check, shared by the HTTP caller routes and the agent tools on `/mcp`: a
 * presented `dcd_` key must hash to an active key of an organization that is not suspended (the hub's
 * `organization.status.changed` fact). A suspended organization's key is refused as an unknown one, and works
 * again once the organization is active. A key that passes has its use noted (`CallerKeyStore.touch`).
 */
export class CallerAuthentication extends Context.Service<
  CallerAuthentication,
  {
    /** Who the presented key acts for, or undefined (unknown, revoked, or its organization suspended). */
    readonly authenticate: (presented: string) => Effect.Effect<CallerIdentity | undefined>
  }
>()("core/decisions/CallerAuthentication") {
  static readonly layer = Layer.effect(
    CallerAuthentication,
    Effect.gen(function* () {
      const keys = yield* CallerKeyStore
      const statuses = yield* OrganizationStatuses
      return CallerAuthentication.of({
        // Untraced: it runs on every caller request, inside the request's own span.
        authenticate: Effect.fnUntraced(function* (presented: string) {
          if (!presented.startsWith("dcd_")) return undefined
          const key = yield* keys.findActive(hashSecret(presented))
          if (key === undefined || (yield* statuses.organizationSuspended(key.organizationId))) return undefined
          yield* keys.touch(key.id, isoAt(yield* Clock.currentTimeMillis))
          return { organizationId: key.organizationId, callerName: key.name, keyId: key.id } satisfies CallerIdentity
        })
      })
    })
  )
}
