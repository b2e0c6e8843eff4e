import { Effect, Layer, Option, Result } from "effect"
import { GuardedHttpClient } from "../../adapters/http/GuardedHttpClient.ts"
import { IdempotencyLayers } from "../../adapters/http/IdempotencyLayers.ts"
import { RecordingAccessHttp } from "../../adapters/http/hub/RecordingAccessHttp.ts"
import { ServiceDataApi } from "../../adapters/http/hub/ServiceDataApi.ts"
import { ServiceDataHandlers } from "../../adapters/http/hub/ServiceDataHandlers.ts"
import { serviceRoutes } from "../../adapters/http/ServiceHttp.ts"
import { IdempotencyStoreMemory } from "../../adapters/memory/IdempotencyStoreMemory.ts"
import { RecordingGrantAuditMemory } from "../../adapters/memory/hub/RecordingGrantAuditMemory.ts"
import { ServiceStoreMemory } from "../../adapters/memory/hub/ServiceStoreMemory.ts"
import { ShortLinkStoreMemory } from "../../adapters/memory/hub/ShortLinkStoreMemory.ts"
import { TransactionsMemory } from "../../adapters/memory/TransactionsMemory.ts"
import { sign } from "../../core/auth/Signature.ts"
import { parseContextKeys, type ContextKeys } from "../../core/hub/ContextKeys.ts"
import { Directory } from "../../core/hub/Directory.ts"
import { ExpertRosterUnconfigured, type ExpertRoster } from "../../core/hub/ExpertRoster.ts"
import { RecordingGrantAudit, type RecordingAccess } from "../../core/hub/RecordingGrants.ts"
import { Registry } from "../../core/hub/Registry.ts"
import { ShortenerOwn, type Shortener } from "../../core/hub/ShortLinks.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"
import { IdentityTokens } from "../../core/hub/IdentityTokens.ts"
import type { ProviderProfiles } from "../../core/hub/ServiceDataProviders.ts"
import type { ServiceReads } from "../../core/hub/ServiceReads.ts"
import { ServiceReadsHttp } from "../../adapters/http/hub/ServiceReadsHttp.ts"
import { request, serveForTest, type Answer } from "./Http.ts"

/** The context keys of the service-data callers in these tests (and of one subject-context caller). */
export const keys: Record<string, string> = {
  crm: "context-key-of-the-crm-0123",
  "meeting-recaps": "context-key-of-meeting-recaps",
  "onboarding-portal": "context-key-of-the-portal-01",
  tasks: "context-key-of-the-task-inbox"
}
export const contextKeys = Result.getOrThrow(
  parseContextKeys(
    Object.entries(keys)
      .map(([caller, key]) => `${caller}:${key}`)
      .join(",")
  )
)
export const publicUrl = "https://hub.example.test"
export const secretsKey = "hub-secrets-key-for-service-data-0123"
export const issuer = "platform-hub-test"

// 2026-03-01T09:00:00Z: every request is signed against the TestClock's now.
export const nowMs = Date.UTC(2026, 2, 1, 9, 0, 0)
export const nowSeconds = nowMs / 1000

export interface Upstreams {
  readonly roster?: Layer.Layer<ExpertRoster> | undefined
  readonly shortener?: Layer.Layer<Shortener> | undefined
  /** The directory to serve over (the test's own when there is one); false: served without one. */
  readonly directory?: false | Directory["Service"] | undefined
  readonly contextKeys?: ContextKeys | undefined
  readonly requestsPerMinute?: number | undefined
  /** The registry (the recordings service is looked up in it); an empty one otherwise. */
  readonly registry?: Registry["Service"] | undefined
  /** The recordings service's access; over HTTP otherwise. */
  readonly recordings?: Layer.Layer<RecordingAccess> | undefined
  /** The hub's audit of recording grants; a fresh memory one otherwise. */
  readonly audit?: RecordingGrantAudit["Service"] | undefined
  /** The products' reads; over HTTP otherwise. */
  readonly reads?: Layer.Layer<ServiceReads> | undefined
  /** Loopback services may be called (as outside production); true unless told. */
  readonly allowLoopback?: boolean | undefined
  readonly providerProfiles?: ProviderProfiles | undefined
}

/**
 * Serves the service-data plane over memory stores (with the hub's idempotency middlewares) and the
 * upstreams given.
 */
export const serveServiceData = (upstreams: Upstreams = {}) =>
  Effect.gen(function* () {
    // The directory of the test when there is one (none is served without it).
    const directory =
      upstreams.directory === false
        ? undefined
        : (upstreams.directory ?? Option.getOrUndefined(yield* Effect.serviceOption(Directory)))
    const stores = Layer.mergeAll(ShortLinkStoreMemory, TransactionsMemory, IdempotencyStoreMemory, IdGeneratorUlid)
    const registry =
      upstreams.registry === undefined
        ? Registry.layer({ secretsKey, allowLoopbackHttp: true }).pipe(Layer.provide(ServiceStoreMemory))
        : Layer.succeed(Registry, upstreams.registry)
    const guarded = GuardedHttpClient({ allowLoopback: upstreams.allowLoopback ?? true })
    const shortener = upstreams.shortener ?? ShortenerOwn(publicUrl).pipe(Layer.provide(stores))
    const served = yield* serveForTest(
      serviceRoutes({
        api: ServiceDataApi,
        handlers: ServiceDataHandlers({
          contextKeys: upstreams.contextKeys ?? contextKeys,
          requestsPerMinute: upstreams.requestsPerMinute ?? 1000,
          publicUrl,
          providerProfiles: upstreams.providerProfiles
        }),
        errors: { dialect: "hub", maxBodyBytes: 64 * 1024 }
      }).pipe(
        Layer.provide(IdempotencyLayers({ dialect: "hub", secretsKey })),
        Layer.provideMerge(
          Layer.mergeAll(
            upstreams.roster ?? ExpertRosterUnconfigured,
            shortener,
            registry,
            upstreams.recordings ?? RecordingAccessHttp().pipe(Layer.provide(guarded)),
            upstreams.audit === undefined
              ? RecordingGrantAuditMemory
              : Layer.succeed(RecordingGrantAudit, upstreams.audit),
            upstreams.reads ?? ServiceReadsHttp().pipe(Layer.provide(guarded)),
            directory === undefined
              ? Layer.empty
              : Layer.merge(
                  Layer.succeed(Directory, directory),
                  IdentityTokens.layer({ issuer }).pipe(
                    Layer.provide(Layer.merge(registry, Layer.succeed(Directory, directory)))
                  )
                )
          )
        ),
        Layer.provideMerge(stores)
      )
    )
    return served
  })

export interface Signed {
  readonly caller?: string | undefined
  readonly key?: string | undefined
  readonly timestamp?: number | undefined
  /** What the signature covers, when it is not what is sent. */
  readonly signed?: string | undefined
  /** More headers to send (an `Idempotency-Key`). */
  readonly headers?: Readonly<Record<string, string>> | undefined
}

const headersFor = (payload: string, options: Signed, fallback: string) => {
  const caller = options.caller ?? fallback
  const timestamp = options.timestamp ?? nowSeconds
  return {
    "x-workspace-service-id": caller,
    "x-platform-timestamp": String(timestamp),
    "x-platform-signature": sign({
      secret: options.key ?? keys[caller] ?? "no-key-for-this-caller",
      timestamp,
      payload: options.signed ?? payload
    })
  }
}

/** A signed GET: the signature covers the query string exactly as sent. */
export const signedGet = (baseUrl: string, path: string, query: string, options: Signed & { readonly as: string }) =>
  request(`${baseUrl}${path}?${query}`, { headers: headersFor(query, options, options.as) })

/** A signed POST: the signature covers the raw body. */
export const signedPost = (baseUrl: string, path: string, body: string, options: Signed & { readonly as: string }) =>
  request(`${baseUrl}${path}`, {
    method: "POST",
    headers: { ...headersFor(body, options, options.as), "content-type": "application/json", ...options.headers },
    body
  })

/** Every header of an answer but its date, in order: what must be identical between two refusals. */
export const headersOf = (answer: Answer) => [...answer.headers].filter(([name]) => name !== "date")
