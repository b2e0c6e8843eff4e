import { Clock, Context, Effect, Layer } from "effect"
import { isoAt } from "../kernel/Timestamp.ts"
import { issueSecret } from "../auth/IssuedSecret.ts"
import { open, seal } from "../auth/SecretBox.ts"
import { Conflict, Forbidden, NotConfigured, NotFound, ValidationError } from "../kernel/Errors.ts"
import { bodyIssue } from "../kernel/FieldIssue.ts"
import {
  CredentialKinds,
  ServiceStore,
  type ConformanceReport,
  type CredentialKind,
  type RegisteredService,
  type SealedCredentials,
  type StoredService
} from "./ServiceStore.ts"

/**
 * A service id is 3 to 32 lowercase letters and digits, in words joined by single hyphens (`invoices`,
 * `meeting-recaps`): the platform's own ids carry hyphens, and any of them can be registered like any other
 * service. Event types never carry one: the catalog, not the id, decides which types a service emits.
 */
export const serviceIdPattern = /^(?=.{3,32}$)[a-z0-9]+(-[a-z0-9]+)*$/

/**
 * A registered app's slug in `POST /api/v1/registry/{slug}/authorize`: 3 to 32 lowercase letters and digits,
 * without hyphens (the route's published pattern).
 */
export const appSlugPattern = /^[a-z0-9]{3,32}$/
export const displayNameMax = 80

/**
 * Ids a developer may not register: the platform's own services that the bundled server registers or names
 * itself (`decisions`, `tasks`, `crm`), and `hub`, the audience the conformance check relies on being
 * nobody's. Registered by someone else, such an id would take over the first-party producer's event types in
 * the catalog, or a service that the bundled server registers only when it is configured. The platform's
 * other ids (`meeting-recaps`, `schema-analysis`, ...) are registered through the operator API like any
 * other service.
 */
export const reservedServiceIds: ReadonlySet<string> = new Set(["decisions", "tasks", "crm", "hub"])

/** The three credentials in the clear: only ever in the answer that issues them, and inside the hub. */
export type Credentials = Readonly<Record<CredentialKind, string>>

const prefixes: Record<CredentialKind, string> = { apiKey: "hsk_", signingKey: "hsg_", embedKey: "hek_" }

const issueCredentials = (): Credentials => ({
  apiKey: issueSecret(prefixes.apiKey).plaintext,
  signingKey: issueSecret(prefixes.signingKey).plaintext,
  embedKey: issueSecret(prefixes.embedKey).plaintext
})

export interface Registration {
  readonly id: string
  readonly displayName: string
  readonly baseUrl: string
  readonly apiKeyHeader?: string | undefined
  readonly resourcePath?: string | undefined
  /** The service serves pages for the workspace. */
  readonly pages?: boolean | undefined
  /** The page the workspace embeds full page (https; the organization must consent to embedding). */
  readonly embedUrl?: string | undefined
  /** The service's own web app, which the workspace links to (people sign in there through the hub). */
  readonly appUrl?: string | undefined
}

/** A first-party service, as the bundled server's configuration describes it: its keys come from the config. */
export interface FirstPartyService extends Registration {
  readonly credentials: Partial<Credentials>
}

export interface RegistryConfig {
  /** `HUB_SECRETS_KEY`; without it nothing can be sealed or opened, so registration fails closed. */
  readonly secretsKey: string | undefined
  /** Outside production a base URL may be plain http on a loopback address (local services, tests). */
  readonly allowLoopbackHttp: boolean
}

const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]"])
const headerName = /^[A-Za-z0-9-]{1,64}$/

/** An absolute URL a service is reached at: https (or loopback http where allowed), at most 2048 characters, no credentials or fragment. */
const serviceUrl = (text: string, allowLoopbackHttp: boolean): URL | undefined => {
  if (text.length > 2048) return undefined
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return undefined
  }
  const loopbackHttp = allowLoopbackHttp && url.protocol === "http:" && loopbackHosts.has(url.hostname)
  if (url.protocol !== "https:" && !loopbackHttp) return undefined
  return url.username === "" && url.password === "" && url.hash === "" ? url : undefined
}

/** A refusal of one field of the registration, the message naming it. */
const invalidField = (field: string, message: string) =>
  new ValidationError({ message, details: [bodyIssue(field, message)] })

/** A base URL: a service URL without a query; trailing `/` dropped. */
export const checkBaseUrl = (text: string, allowLoopbackHttp: boolean): string | ValidationError => {
  const url = serviceUrl(text, allowLoopbackHttp)
  if (url === undefined || url.search !== "") {
    return invalidField("baseUrl", "baseUrl must be an https URL without credentials, query or fragment.")
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "")
}

/** An embed URL: a service URL whose query is kept, but may not carry `wt` (the hub adds it). */
export const checkEmbedUrl = (text: string, allowLoopbackHttp: boolean): string | ValidationError => {
  const url = serviceUrl(text, allowLoopbackHttp)
  if (url === undefined || url.searchParams.has("wt")) {
    return invalidField("embedUrl", "embedUrl must be an https URL without credentials or fragment.")
  }
  return url.href
}

/** A web app's address: a service URL, its query kept. */
export const checkAppUrl = (text: string, allowLoopbackHttp: boolean): string | ValidationError => {
  const url = serviceUrl(text, allowLoopbackHttp)
  if (url === undefined) return invalidField("appUrl", "appUrl must be an https URL without credentials or fragment.")
  return url.href
}

const checkRegistration = (input: Registration, allowLoopbackHttp: boolean) => {
  if (!serviceIdPattern.test(input.id)) {
    return invalidField("id", "id must be 3 to 32 lowercase letters and digits, words joined by single hyphens.")
  }
  const displayName = input.displayName.trim()
  if (displayName.length === 0 || displayName.length > displayNameMax) {
    return invalidField("displayName", `displayName must be 1 to ${displayNameMax} characters.`)
  }
  const apiKeyHeader = input.apiKeyHeader ?? "X-Workspace-Api-Key"
  if (!headerName.test(apiKeyHeader)) {
    return invalidField("apiKeyHeader", "apiKeyHeader must be a header name.")
  }
  const resourcePath = input.resourcePath ?? "/api/v1/summary"
  if (!resourcePath.startsWith("/") || resourcePath.startsWith("//") || resourcePath.length > 512) {
    return invalidField("resourcePath", "resourcePath must be a path starting with /.")
  }
  const baseUrl = checkBaseUrl(input.baseUrl, allowLoopbackHttp)
  if (typeof baseUrl !== "string") return baseUrl
  const embedUrl = input.embedUrl === undefined ? undefined : checkEmbedUrl(input.embedUrl, allowLoopbackHttp)
  if (embedUrl instanceof ValidationError) return embedUrl
  const appUrl = input.appUrl === undefined ? undefined : checkAppUrl(input.appUrl, allowLoopbackHttp)
  if (appUrl instanceof ValidationError) return appUrl
  return {
    id: input.id,
    displayName,
    baseUrl,
    apiKeyHeader,
    resourcePath,
    pages: input.pages === true,
    ...(embedUrl === undefined ? {} : { embedUrl }),
    ...(appUrl === undefined ? {} : { appUrl })
  }
}

const notConfigured = () => new NotConfigured({ message: "The service registry is not configured." })

/**
 * The service registry's use cases. Credentials are issued here, sealed before they are stored, shown once
 * (the answer of `register` and `rotate`), and opened only for the hub's own use (`credentials`).
 */
export class Registry extends Context.Service<
  Registry,
  {
    readonly register: (
      input: Registration
    ) => Effect.Effect<
      { readonly service: RegisteredService; readonly credentials: Credentials },
      ValidationError | Conflict | NotConfigured
    >
    /**
     * Registers or refreshes a first-party service from configuration: the configured keys replace the
     * stored ones, missing ones are issued once and kept. Its status and conformance report are kept.
     */
    readonly registerFirstParty: (input: FirstPartyService) => Effect.Effect<RegisteredService, NotConfigured>
    readonly find: (id: string) => Effect.Effect<RegisteredService, NotFound>
    readonly list: () => Effect.Effect<ReadonlyArray<RegisteredService>>
    /** A new value for one credential, shown once; the old one stops working at once. */
    readonly rotate: (
      id: string,
      kind: CredentialKind
    ) => Effect.Effect<{ readonly service: RegisteredService; readonly value: string }, NotFound | NotConfigured>
    /** The service's credentials in the clear, for the hub's own calls and checks; undefined when unknown. */
    readonly credentials: (
      id: string
    ) => Effect.Effect<
      { readonly service: RegisteredService; readonly credentials: Credentials } | undefined,
      NotConfigured
    >
    /** Keeps the report and, when given, the facts the service's manifest declares (`consumesFacts`). */
    readonly recordConformance: (
      id: string,
      report: ConformanceReport,
      consumesFacts?: ReadonlyArray<string>
    ) => Effect.Effect<RegisteredService, NotFound>
    /** Draft (or suspended) to live: only with a passing conformance report (403 FORBIDDEN otherwise). */
    readonly promote: (id: string) => Effect.Effect<RegisteredService, NotFound | Forbidden>
    readonly suspend: (id: string) => Effect.Effect<RegisteredService, NotFound>
  }
>()("core/hub/Registry") {
  static readonly layer = (config: RegistryConfig) =>
    Layer.effect(
      Registry,
      Effect.gen(function* () {
        const store = yield* ServiceStore
        const key = config.secretsKey !== undefined && config.secretsKey.length > 0 ? config.secretsKey : undefined
        const nowIso = Effect.map(Clock.currentTimeMillis, isoAt)

        const sealAll = (secretsKey: string, credentials: Credentials): SealedCredentials =>
          Object.fromEntries(CredentialKinds.map((kind) => [kind, seal(secretsKey, credentials[kind])])) as never

        const openAll = (secretsKey: string, sealed: SealedCredentials): Credentials | undefined => {
          const opened: Partial<Record<CredentialKind, string>> = {}
          for (const kind of CredentialKinds) {
            const value = open(secretsKey, sealed[kind])
            if (value === undefined) return undefined
            opened[kind] = value
          }
          return opened as Credentials
        }

        const load = (id: string) =>
          Effect.flatMap(store.find(id), (row) =>
            row === undefined ? Effect.fail(new NotFound({})) : Effect.succeed(row)
          )

        /** Read, change, save under the version guard; a concurrent change is read again and re-applied. */
        const update = (id: string, change: (row: StoredService, now: string) => StoredService) =>
          Effect.gen(function* () {
            for (;;) {
              const row = yield* load(id)
              const now = yield* nowIso
              const changed = change(row, now)
              const next: StoredService = {
                ...changed,
                service: { ...changed.service, updatedAt: now, version: row.service.version + 1 }
              }
              if (yield* store.save(next, row.service.version)) return next
            }
          })

        return Registry.of({
          register: (input) =>
            Effect.gen(function* () {
              if (key === undefined) return yield* Effect.fail(notConfigured())
              const checked = checkRegistration(input, config.allowLoopbackHttp)
              if (checked instanceof ValidationError) return yield* Effect.fail(checked)
              if (reservedServiceIds.has(checked.id)) {
                return yield* Effect.fail(new Conflict({ message: "This id is reserved for a platform service." }))
              }
              const now = yield* nowIso
              const credentials = issueCredentials()
              const service: RegisteredService = {
                ...checked,
                status: "draft",
                firstParty: false,
                createdAt: now,
                updatedAt: now,
                version: 1,
                conformance: null
              }
              const created = yield* store.create({ service, credentials: sealAll(key, credentials) })
              if (created === "taken") {
                return yield* Effect.fail(new Conflict({ message: "A service with this id is already registered." }))
              }
              return { service, credentials }
            }),

          registerFirstParty: (input) =>
            Effect.gen(function* () {
              if (key === undefined) return yield* Effect.fail(notConfigured())
              // Configuration is trusted: loopback http is fine for a service the operator runs beside the hub.
              const checked = checkRegistration(input, true)
              if (checked instanceof ValidationError) return yield* Effect.die(new Error(checked.message))
              const now = yield* nowIso
              // Only keys the configuration really sets; an empty one is as good as unset.
              const configured = Object.fromEntries(
                Object.entries(input.credentials).filter(([, value]) => typeof value === "string" && value.length > 0)
              ) as Partial<Credentials>
              const fresh = { ...issueCredentials(), ...configured }
              const created = yield* store.create({
                service: {
                  ...checked,
                  status: "draft",
                  firstParty: true,
                  createdAt: now,
                  updatedAt: now,
                  version: 1,
                  conformance: null
                },
                credentials: sealAll(key, fresh)
              })
              if (created === "created") return (yield* Effect.orDie(load(input.id))).service
              const updated = yield* Effect.orDie(
                update(input.id, (row) => {
                  const kept = openAll(key, row.credentials) ?? issueCredentials()
                  return {
                    service: { ...row.service, ...checked, firstParty: true },
                    credentials: sealAll(key, { ...kept, ...configured })
                  }
                })
              )
              return updated.service
            }),

          find: (id) => Effect.map(load(id), (row) => row.service),
          list: () => store.list(),

          rotate: (id, kind) =>
            Effect.gen(function* () {
              if (key === undefined) return yield* Effect.fail(notConfigured())
              const value = issueSecret(prefixes[kind]).plaintext
              const updated = yield* update(id, (row) => ({
                service: row.service,
                credentials: { ...row.credentials, [kind]: seal(key, value) }
              }))
              return { service: updated.service, value }
            }),

          credentials: (id) =>
            Effect.gen(function* () {
              if (key === undefined) return yield* Effect.fail(notConfigured())
              const row = yield* store.find(id)
              if (row === undefined) return undefined
              const credentials = openAll(key, row.credentials)
              // Sealed under another key (HUB_SECRETS_KEY changed): the credentials are unusable, fail closed.
              if (credentials === undefined) return yield* Effect.fail(notConfigured())
              return { service: row.service, credentials }
            }),

          recordConformance: (id, report, consumesFacts) =>
            Effect.map(
              update(id, (row) => ({
                ...row,
                service: {
                  ...row.service,
                  conformance: report,
                  ...(consumesFacts === undefined ? {} : { consumesFacts })
                }
              })),
              (row) => row.service
            ),

          promote: (id) =>
            Effect.gen(function* () {
              // Checked inside the guarded update, so a failing report saved meanwhile is never promoted past.
              const updated = yield* update(id, (row) =>
                row.service.conformance?.passed === true ? { ...row, service: { ...row.service, status: "live" } } : row
              )
              if (updated.service.status === "live") return updated.service
              return yield* Effect.fail(
                new Forbidden({ message: "The service needs a passing conformance report before it can go live." })
              )
            }),

          suspend: (id) =>
            Effect.map(
              update(id, (row) => ({ ...row, service: { ...row.service, status: "suspended" } })),
              (row) => row.service
            )
        })
      })
    )
}
