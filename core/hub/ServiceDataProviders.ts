import { Effect, Predicate, Result } from "effect"
import { normalizeEmail } from "../kernel/Email.ts"
import { Forbidden, NotFound, ValidationError } from "../kernel/Errors.ts"
import { queryIssue } from "../kernel/FieldIssue.ts"
import { isKeyedCaller, KeyedCallers, type KeyedCaller } from "./ContextKeys.ts"
import { Directory } from "./Directory.ts"
import { IdentityTokens } from "./IdentityTokens.ts"
import { holds } from "./Permissions.ts"
import { Registry } from "./Registry.ts"
import { ServiceReads } from "./ServiceReads.ts"
import { primaryMembership } from "./SubjectContext.ts"

/** The providers of `GET /api/v1/service-data/{provider}`. */
export const Providers = ["search", "schema-analysis", "error-monitoring"] as const
export type Provider = (typeof Providers)[number]

export const isProvider = (value: string): value is Provider => (Providers as ReadonlyArray<string>).includes(value)

/** Which providers each caller may use; a caller without an entry uses none. */
export type ProviderProfiles = Readonly<Partial<Record<KeyedCaller, ReadonlyArray<Provider>>>>

/**
 * Unless `HUB_PROVIDER_PROFILES` says otherwise: every subject-context caller may search; the task inbox, which
 * hands work across tools, also reads both products' summaries; each of the two products reads the other's.
 */
export const defaultProviderProfiles: ProviderProfiles = {
  tasks: ["search", "schema-analysis", "error-monitoring"],
  "meeting-recaps": ["search"],
  "schema-analysis": ["search", "error-monitoring"],
  "error-monitoring": ["search", "schema-analysis"]
}

/**
 * Parses `HUB_PROVIDER_PROFILES`: `service-id:provider+provider` entries separated by commas (an empty list
 * after the colon gives that caller none). Unset or blank: the defaults. Any bad entry refuses the whole value,
 * named by its position.
 */
export const parseProviderProfiles = (text: string | undefined): Result.Result<ProviderProfiles, string> => {
  if (text === undefined || text.trim().length === 0) return Result.succeed(defaultProviderProfiles)
  const profiles: Partial<Record<KeyedCaller, ReadonlyArray<Provider>>> = {}
  for (const [index, raw] of text.split(",").entries()) {
    const [caller = "", list, ...rest] = raw.trim().split(":")
    const providers = list === undefined || list.length === 0 ? [] : list.split("+")
    if (!isKeyedCaller(caller) || list === undefined || rest.length > 0 || !providers.every(isProvider)) {
      return Result.fail(
        `Provider profile entry ${index + 1} must be <service-id>:<provider>+<provider> with a service id among ` +
          `${KeyedCallers.join(", ")} and providers among ${Providers.join(", ")}.`
      )
    }
    if (profiles[caller] !== undefined)
      return Result.fail(`Provider profile entry ${index + 1} names a caller given before.`)
    profiles[caller] = [...new Set(providers)]
  }
  return Result.succeed(profiles)
}

/** The callers that may use at least one provider: the ones the route admits. */
export const hasProviderProfile = (profiles: ProviderProfiles, caller: KeyedCaller): boolean =>
  (profiles[caller] ?? []).length > 0

/** The permission key a subject must hold (on their organization's tier) to read a product's summary. */
const summaryKeys: Readonly<Record<Exclude<Provider, "search">, string>> = {
  "schema-analysis": "schema-analysis.insight.read",
  "error-monitoring": "error-monitoring.ticket.read"
}

export interface ProviderQuery {
  readonly email?: string | undefined
  readonly q?: string | undefined
  readonly limit?: number | undefined
}

export interface SearchResult {
  /** `service`: a service of the catalog; `hit`: a hit of a service's own search. */
  readonly kind: "service" | "hit"
  readonly service: string
  readonly title: string
  readonly score: number | null
  readonly href: string | null
}

export type ProviderAnswer =
  | { readonly provider: "search"; readonly degraded: boolean; readonly results: ReadonlyArray<SearchResult> }
  | {
      readonly provider: "schema-analysis" | "error-monitoring"
      readonly degraded: boolean
      readonly summary: unknown
    }

const defaultLimit = 10

/** A service's search hits, as much of them as has the documented fields; anything else is dropped. */
const hitsOf = (service: string, data: unknown): Array<SearchResult> => {
  const list = Array.isArray(data)
    ? data
    : Predicate.isObject(data) && Array.isArray((data as { results?: unknown }).results)
      ? ((data as { results: Array<unknown> }).results as Array<unknown>)
      : []
  return list.flatMap((item): Array<SearchResult> => {
    if (!Predicate.isObject(item)) return []
    const { title, score, href } = item as { title?: unknown; score?: unknown; href?: unknown }
    if (typeof title !== "string" || title.length === 0) return []
    return [
      {
        kind: "hit",
        service,
        title: title.slice(0, 200),
        score: typeof score === "number" && Number.isFinite(score) ? score : null,
        href: typeof href === "string" && href.startsWith("/") && !href.startsWith("//") ? href.slice(0, 512) : null
      }
    ]
  })
}

/**
 * One read of the cross-service data plane for `caller`. In order: an unknown provider is NotFound; one the
 * caller's profile leaves out is Forbidden; `q` (2 to 200 characters) is required for `search`, `email` for the
 * two products (ValidationError); an email no workspace user has is NotFound. A product's summary needs the
 * subject's entitlement: their organization has installed the product, the product is live, and their role on
 * the organization's tier holds the product's read key (Forbidden otherwise); it is read from the product with
 * its API key and an identity token minted for the subject. `search` answers the live services of the catalog
 * whose id or name holds `q` and, for a subject, the hits of the services' own search among the products the
 * subject may use. An upstream that fails is left out and the answer says `degraded: true`: never a 5xx.
 */
export const readProvider = Effect.fn("ServiceDataProviders.read")(function* (
  caller: KeyedCaller,
  profiles: ProviderProfiles,
  providerName: string,
  query: ProviderQuery
) {
  const registry = yield* Registry
  const directory = yield* Directory
  const tokens = yield* IdentityTokens
  const reads = yield* ServiceReads
  if (!isProvider(providerName)) return yield* new NotFound({ message: "No such provider." })
  const provider = providerName
  if (!(profiles[caller] ?? []).includes(provider)) {
    return yield* new Forbidden({ message: "This service may not use that provider." })
  }
  const q = query.q?.trim()
  if (provider === "search" && (q === undefined || q.length < 2 || q.length > 200)) {
    return yield* new ValidationError({
      message: "q is required: 2 to 200 characters.",
      details: [queryIssue("q", "must be 2 to 200 characters")]
    })
  }
  if (provider !== "search" && query.email === undefined) {
    return yield* new ValidationError({
      message: "email is required for this provider.",
      details: [queryIssue("email", "is required")]
    })
  }
  const user = query.email === undefined ? undefined : yield* directory.findUserByEmail(normalizeEmail(query.email))
  if (query.email !== undefined && user === undefined) {
    return yield* new NotFound({ message: "No workspace user has that email." })
  }
  const primary = user === undefined ? undefined : primaryMembership(yield* directory.membershipsOf(user.id))
  const installed =
    primary === undefined
      ? new Set<string>()
      : new Set((yield* directory.installationsOf(primary.org.id)).filter((i) => i.active).map((i) => i.serviceId))
  const live = (yield* registry.list()).filter((s) => s.status === "live")
  const entitled = (product: Exclude<Provider, "search">) =>
    primary !== undefined &&
    installed.has(product) &&
    live.some((s) => s.id === product) &&
    holds(primary.membership.role, primary.org.tier, summaryKeys[product])

  /** A product's read for the subject, or undefined when it failed. */
  const readFrom = (
    product: Exclude<Provider, "search">,
    path: "/api/v1/summary" | "/api/v1/search",
    params: Record<string, string>
  ) =>
    Effect.gen(function* () {
      const registered = yield* registry.credentials(product)
      if (registered === undefined || user === undefined || primary === undefined) return undefined
      const minted = yield* tokens.mintFor({ service: product, email: user.email, companyId: primary.org.id })
      return yield* reads.read(
        {
          baseUrl: registered.service.baseUrl,
          apiKeyHeader: registered.service.apiKeyHeader,
          apiKey: registered.credentials.apiKey,
          token: minted.token
        },
        path,
        params
      )
    }).pipe(
      Effect.catch(() =>
        Effect.as(Effect.logWarning("a service-data provider could not be read", { provider: product }), undefined)
      )
    )

  if (provider !== "search") {
    if (!entitled(provider)) return yield* new Forbidden({ message: "The subject is not entitled to that product." })
    const summary = yield* readFrom(provider, "/api/v1/summary", {})
    return { provider, degraded: summary === undefined, summary: summary ?? null } satisfies ProviderAnswer
  }

  const limit = query.limit ?? defaultLimit
  const needle = q!.toLowerCase()
  const catalog: Array<SearchResult> = live
    .filter((s) => s.id.includes(needle) || s.displayName.toLowerCase().includes(needle))
    .map((s) => ({ kind: "service", service: s.id, title: s.displayName, score: null, href: null }))
  const products = (["schema-analysis", "error-monitoring"] as const).filter(entitled)
  const answers = yield* Effect.forEach(
    products,
    (product) => Effect.map(readFrom(product, "/api/v1/search", { q: q! }), (data) => ({ product, data })),
    { concurrency: "unbounded" }
  )
  const hits = answers
    .flatMap(({ product, data }) => (data === undefined ? [] : hitsOf(product, data)))
    .sort((a, b) => (b.score ?? 0) - (a.score ?? 0))
  return {
    provider,
    degraded: answers.some((a) => a.data === undefined),
    results: [...catalog, ...hits].slice(0, limit)
  } satisfies ProviderAnswer
})
