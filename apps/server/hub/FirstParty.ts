import { Duration, Effect, Layer, Redacted, Schedule } from "effect"
import { Conformance } from "../../../core/hub/Conformance.ts"
import { Registry, type FirstPartyService } from "../../../core/hub/Registry.ts"
import type { ConformanceReport, CredentialKind } from "../../../core/hub/ServiceStore.ts"

/** The first-party services as the bundled server's configuration describes them to the hub. */
export interface FirstPartySettings {
  /** Where the hub reaches each service (its own listener, usually `http://127.0.0.1:<port>`). */
  readonly decisionsBaseUrl: string
  readonly tasksBaseUrl: string
  /** Where people open the task inbox's web app (TASKS_PUBLIC_URL): the workspace links there. */
  readonly tasksAppUrl?: string | undefined
  /**
   * `DECISIONS_API_KEY`, `DECISIONS_EMBED_KEY`, `DECISIONS_SIGNING_KEY`, `TASKS_API_KEY`, `TASKS_SIGNING_KEY`
   * (the signing keys are those each service signs its events with); an unset one is issued by the registry.
   */
  readonly decisionsApiKey: Redacted.Redacted<string> | undefined
  readonly decisionsEmbedKey: Redacted.Redacted<string> | undefined
  readonly decisionsSigningKey?: Redacted.Redacted<string> | undefined
  readonly tasksApiKey: Redacted.Redacted<string> | undefined
  readonly tasksSigningKey: Redacted.Redacted<string> | undefined
  /** How many times the check runs before giving up (the listeners may still be starting), and the pause. */
  readonly attempts?: number | undefined
  readonly retryDelay?: Duration.Input | undefined
}

/** The keys the configuration sets, in the clear for the registry (which seals them at once). */
const configured = (
  keys: Partial<Record<CredentialKind, Redacted.Redacted<string> | undefined>>
): Partial<Record<CredentialKind, string>> =>
  Object.fromEntries(
    Object.entries(keys).flatMap(([kind, value]) => (value === undefined ? [] : [[kind, Redacted.value(value)]]))
  )

/**
 * Decisions: the workspace plane takes the service key plus an identity token of audience `decisions`, so its
 * inbox list is where a wrong audience must be refused. Tasks: the task inbox takes no identity token at all
 * (an X-API-Key or a session), so its inbox list refuses any with 401.
 */
export const firstPartyServices = (settings: FirstPartySettings): ReadonlyArray<FirstPartyService> => [
  {
    id: "decisions",
    displayName: "Decisions",
    baseUrl: settings.decisionsBaseUrl,
    apiKeyHeader: "X-Decisions-Api-Key",
    resourcePath: "/api/v1/workspace/decisions",
    pages: true,
    credentials: configured({
      apiKey: settings.decisionsApiKey,
      embedKey: settings.decisionsEmbedKey,
      signingKey: settings.decisionsSigningKey
    })
  },
  {
    id: "tasks",
    displayName: "Task inbox",
    baseUrl: settings.tasksBaseUrl,
    apiKeyHeader: "X-Tasks-Api-Key",
    resourcePath: "/api/tasks",
    ...(settings.tasksAppUrl === undefined ? {} : { appUrl: `${settings.tasksAppUrl.replace(/\/+$/, "")}/` }),
    credentials: configured({ apiKey: settings.tasksApiKey, signingKey: settings.tasksSigningKey })
  }
]

/**
 * Whether the registry already holds a first-party service exactly as configured, so a restart writes nothing.
 * Anything else (not registered, changed, or sealed under another key) is registered again.
 */
const isCurrent = (registry: Registry["Service"], service: FirstPartyService) =>
  registry.credentials(service.id).pipe(
    Effect.map(
      (stored) =>
        stored !== undefined &&
        stored.service.firstParty &&
        stored.service.displayName === service.displayName &&
        stored.service.baseUrl === service.baseUrl &&
        stored.service.apiKeyHeader === service.apiKeyHeader &&
        stored.service.resourcePath === service.resourcePath &&
        (stored.service.pages ?? false) === (service.pages ?? false) &&
        stored.service.embedUrl === service.embedUrl &&
        stored.service.appUrl === service.appUrl &&
        Object.entries(service.credentials).every(
          ([kind, value]) => stored.credentials[kind as CredentialKind] === value
        )
    ),
    Effect.orElseSucceed(() => false)
  )

/** The names of the checks a report failed, with our own details: safe to log. */
const failures = (report: ConformanceReport) =>
  report.checks.filter((check) => !check.passed).map((check) => `${check.name} (${check.detail ?? "failed"})`)

/**
 * Checks one first-party service and promotes it when it passes. A failing run is retried a few times
 * (at start the listeners may not answer yet); the outcome is logged by check name, never with a key.
 */
const checkAndPromote = (serviceId: string, attempts: number, retryDelay: Duration.Input) =>
  Effect.gen(function* () {
    const conformance = yield* Conformance
    const registry = yield* Registry
    const report = yield* conformance.run(serviceId).pipe(
      Effect.flatMap((report) => (report.passed ? Effect.succeed(report) : Effect.fail(report))),
      Effect.retry({ schedule: Schedule.spaced(retryDelay), times: Math.max(0, attempts - 1) })
    )
    yield* registry.promote(serviceId)
    yield* Effect.logInfo("first-party service passed its conformance check and is live", report.ranAt)
  }).pipe(
    Effect.catch((error) =>
      "checks" in error
        ? Effect.logWarning("first-party service failed its conformance check", failures(error).join(", "))
        : Effect.logWarning("first-party conformance check could not run", error._tag)
    ),
    Effect.annotateLogs({ service: serviceId })
  )

/**
 * At start, registers the decisions and tasks services with the hub's registry from configuration (a
 * registration already as configured is left alone), then (in the background, once the listeners are up)
 * checks each one's conformance and promotes each that passes. Without a secrets key the registry fails
 * closed: nothing is registered, and that is logged.
 */
export const FirstParty = (settings: FirstPartySettings) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const registry = yield* Registry
      const services = firstPartyServices(settings)
      const registered = yield* Effect.forEach(
        services,
        (service) =>
          Effect.flatMap(isCurrent(registry, service), (current) =>
            current ? Effect.void : registry.registerFirstParty(service)
          ),
        { concurrency: "unbounded" }
      ).pipe(
        Effect.as(true),
        Effect.catchTag("NotConfigured", () =>
          Effect.as(
            Effect.logWarning("the service registry is not configured; first-party services are not registered"),
            false
          )
        )
      )
      if (!registered) return
      yield* Effect.forEach(
        services,
        (service) => checkAndPromote(service.id, settings.attempts ?? 5, settings.retryDelay ?? "1 second"),
        { concurrency: "unbounded", discard: true }
      ).pipe(Effect.forkScoped)
    })
  )
