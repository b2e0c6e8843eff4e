import { Cause, Clock, Effect } from "effect"
import { isoAt } from "../kernel/Timestamp.ts"
import { verify } from "../auth/IdentityToken.ts"
import { constantTimeEqual } from "../auth/StaticKey.ts"
import { Forbidden, NotFound, Unauthorized, Unavailable } from "../kernel/Errors.ts"
import { Hub } from "../kernel/Limits.ts"
import type { Tier } from "../kernel/Manifest.ts"
import { Directory, flagEnabled, orgStatus } from "./Directory.ts"
import { appPermissions, tierAllows } from "./Permissions.ts"
import { Registry } from "./Registry.ts"
import type { RegisteredService } from "./ServiceStore.ts"

/** The answer's `data`, exactly these properties. */
export interface RegistryAuthorization {
  readonly active: true
  readonly subject: { readonly email: string; readonly companyId: string }
  readonly access: {
    readonly orgRole: string
    readonly deptSlugs: ReadonlyArray<string>
    readonly roleSlugs: ReadonlyArray<string>
    readonly permissions: ReadonlyArray<string>
  }
  readonly expiresAt: string
  readonly asOf: string
}

/** A registered app whose backend proved its API key: the first step of `authorize`. */
export interface AuthenticatedApp {
  readonly service: RegisteredService
  readonly embedKey: string
}

/**
 * The tier an app requires. The registry stores none yet, so every app is open from the free tier; the
 * check stays in its place in the order so that a stored requirement only has to be read here.
 */
export const appRequiredTier: Tier = "free"

const refuse = (message: string) => new Forbidden({ message })

/**
 * A dependency that fails while authorizing is UNAVAILABLE: the app must deny. Interruption
 * stays interruption. The cause is kept for the log; it never holds the token, which no dependency sees.
 */
const dependency = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Unavailable, R> =>
  Effect.catchCause(effect, (cause) =>
    Cause.hasInterruptsOnly(cause)
      ? Effect.failCause(cause as Cause.Cause<never>)
      : Effect.fail(new Unavailable({ cause: Cause.squash(cause) }))
  )

/**
 * `POST /api/v1/registry/{slug}/authorize`: rechecks, now, that the user of an app's identity token may
 * still use the app in the token's organization. Every step fails closed, in this order:
 *
 * 1. the slug is a registered service and the API key is its key (constant time); 401 otherwise, the same
 *    for an unknown slug and a wrong key. The key alone grants nothing: the token must also verify.
 * 2. the token is AUTH-4 for this app: signed with its embed key, our issuer, audience = slug, not expired
 *    (401).
 * 3. the developer platform is on, for the token's organization (404). Checked only once the caller has
 *    proved both credentials, so the 404 tells nobody else whether the platform is on.
 * 4. membership: the token names an organization and its subject is a verified user (an unverified account
 *    is a demo or experimental identity, which the platform contract says cannot authorize real-data operations) and a
 *    current member of it (403).
 * 5. organization: active, not archived, merged or deleted (403).
 * 6. tier: the organization's tier reaches the app's (403).
 * 7. installation: the app is installed and active in the organization, and the token was issued strictly
 *    after the installation epoch (the last uninstall or re-consent): a token of the same second as the
 *    boundary is refused and must be minted again (403).
 * 8. consents: company id and access claims consented, and the access-claims rollout on (403).
 * 9. availability: the app is live, not draft or suspended (403).
 * 10. certification: its latest conformance report passed (403).
 *
 * Step 1 is `authenticateApp`, the rest `authorize`: the HTTP layer counts the app's quota in between, so
 * requests with a wrong key never spend an app's share. `expiresAt` is the token's own expiry (never
 * extended), `asOf` the time of this check. A failing Directory or Registry is Unavailable (503), never a
 * grant.
 */
export const authenticateApp = Effect.fn("RegistryAuthorization.authenticateApp")(function* (
  slug: string,
  apiKey: string | undefined
) {
  const registry = yield* Registry
  const registered = yield* dependency(registry.credentials(slug))
  const presented = apiKey ?? ""
  if (
    registered === undefined ||
    presented.length === 0 ||
    !constantTimeEqual(presented, registered.credentials.apiKey)
  ) {
    return yield* new Unauthorized({})
  }
  return { service: registered.service, embedKey: registered.credentials.embedKey } satisfies AuthenticatedApp
})

/** Steps 2 to 10 for an app that passed `authenticateApp`; `token` is never logged nor put in an error. */
export const authorize = Effect.fn("RegistryAuthorization.authorize")(function* (
  config: { readonly issuer: string },
  app: AuthenticatedApp,
  token: string
) {
  const directory = yield* Directory
  const nowMs = yield* Clock.currentTimeMillis
  const slug = app.service.id
  const identity = yield* verify({
    token,
    key: app.embedKey,
    issuer: config.issuer,
    audience: slug,
    nowSeconds: Math.floor(nowMs / 1000)
  })

  const flags = yield* dependency(directory.flags())
  if (!flagEnabled(flags, "developer-platform", identity.companyId ?? null)) return yield* new NotFound({})

  const orgId = identity.companyId
  if (orgId === undefined) return yield* refuse("The token names no organization.")
  const user = yield* dependency(directory.findUserByEmail(identity.email))
  // An unverified account is a demo or experimental identity: it never authorizes real-data operations. It
  // gets the same refusal as an unknown user or a non-member, so the answer tells no app which accounts exist.
  const memberships = user === undefined || !user.verified ? [] : yield* dependency(directory.membershipsOf(user.id))
  const member = memberships.find((m) => m.org.id === orgId)
  if (member === undefined) return yield* refuse("The user is not a current member of the organization.")

  if (orgStatus(member.org) !== "active") return yield* refuse("The organization is not active.")
  if (!tierAllows(member.org.tier, appRequiredTier)) {
    return yield* refuse("The organization's plan does not include this app.")
  }

  const installation = yield* dependency(directory.findInstallation(orgId, slug))
  if (installation === undefined || !installation.active) {
    return yield* refuse("The app is not installed in the organization.")
  }
  if (!(identity.issuedAt > installation.epoch)) {
    return yield* refuse("The token predates the app's current installation; mint a new one.")
  }
  const consents = installation.consents
  if (!consents.companyId || !consents.accessClaims) {
    return yield* refuse("The organization has not consented to share its id and access claims with this app.")
  }
  if (!flagEnabled(flags, "access-claims", orgId)) {
    return yield* refuse("Access claims are not enabled for this organization.")
  }

  const service = app.service
  if (service.status !== "live") return yield* refuse("The app is not available.")
  if (service.conformance?.passed !== true) return yield* refuse("The app is not certified.")

  const { membership } = member
  return {
    active: true,
    subject: { email: identity.email, companyId: orgId },
    access: {
      orgRole: membership.role,
      deptSlugs: membership.departments.slice(0, Hub.registryDeptSlugsMax),
      roleSlugs: membership.roles.slice(0, Hub.registryRoleSlugsMax),
      permissions: appPermissions({
        consented: installation.permissions,
        app: slug,
        role: membership.role,
        tier: member.org.tier,
        max: Hub.registryPermissionsMax
      })
    },
    expiresAt: isoAt(identity.expiresAt * 1000),
    asOf: isoAt(nowMs)
  } satisfies RegistryAuthorization as RegistryAuthorization
})
