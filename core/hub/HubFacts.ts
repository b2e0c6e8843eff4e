import { Clock, Context, Effect, Layer } from "effect"
import { sign } from "../auth/Signature.ts"
import { HubEventPublisher, HubPublishFailed } from "../events/HubEventPublisher.ts"
import type { ProducerEvent, ProducerOutbox } from "../events/ProducerOutbox.ts"
import { FactNames, organizationStatusChanged, subjectTierChanged } from "../kernel/Facts.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import { scheduled, type RetryPolicy } from "../kernel/RetryPolicy.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { Directory, type Organization } from "./Directory.ts"
import { consumersOf, membershipFacts, organizationFacts, type FactForService } from "./FactFanOut.ts"
import { Registry } from "./Registry.ts"
import { ServiceStore } from "./ServiceStore.ts"
import { ServiceCalls } from "./Workspace.ts"

/**
 * The hub's outbox of facts for services: the same outbox as a producer's events (core/events/ProducerOutbox.ts)
 * over a table of the hub's own. A row is a ProducerEvent whose `type` is the fact's name and whose `service`
 * is the service it goes to (not the one that made it: the hub did); `subject` and `data` are the fact's.
 */
export class FactOutbox extends Context.Service<FactOutbox, ProducerOutbox["Service"]>()("core/hub/FactOutbox") {}

/**
 * What the hub tells services when something they consume changes: facts (core/kernel/Facts.ts) go into the
 * fact outbox in the unit of work of the change, one per person and per live service whose manifest declares
 * them (core/hub/FactFanOut.ts), and are sent from there with retries until each service accepts them.
 */
export class HubFacts extends Context.Service<
  HubFacts,
  {
    /**
     * Inside the unit of work that changes the organization: the facts its change implies, for its members as
     * they were before it (read here, so call it before the roster changes). Nothing is read when no service
     * consumes a fact.
     */
    readonly organizationChanged: (before: Organization, after: Organization) => Effect.Effect<void>
    /**
     * Runs `change` (adding or removing one of the person's memberships) and enqueues, in the same unit of
     * work, the tier fact it implies for them. Nothing more is read when no service consumes it.
     */
    readonly membershipChange: <A, E, R>(
      person: { readonly id: string; readonly email: string },
      change: Effect.Effect<A, E, R>
    ) => Effect.Effect<A, E, R>
  }
>()("core/hub/HubFacts") {
  static readonly layer: Layer.Layer<HubFacts, never, Directory | ServiceStore | FactOutbox | IdGenerator> =
    Layer.effect(
      HubFacts,
      Effect.gen(function* () {
        const directory = yield* Directory
        const services = yield* ServiceStore
        const outbox = yield* FactOutbox
        const ids = yield* IdGenerator
        const enqueueAll = (facts: ReadonlyArray<FactForService>, nowMs: number) =>
          Effect.forEach(
            facts,
            ({ service, fact }) =>
              Effect.flatMap(ids.next, (id) =>
                outbox.enqueue({
                  id,
                  type: fact.fact,
                  service,
                  occurredAt: isoAt(nowMs),
                  subject: fact.subject,
                  data: fact.data,
                  contractVersion: "v1"
                })
              ),
            { discard: true }
          )
        return HubFacts.of({
          membershipChange: (person, change) =>
            Effect.gen(function* () {
              const registered = yield* services.list()
              if (consumersOf(registered, subjectTierChanged).length === 0) return yield* change
              const before = yield* directory.membershipsOf(person.id)
              const result = yield* change
              const after = yield* directory.membershipsOf(person.id)
              const nowMs = yield* Clock.currentTimeMillis
              const facts = membershipFacts({
                email: person.email,
                before,
                after,
                services: registered,
                changedAt: isoAt(nowMs)
              })
              yield* enqueueAll(facts, nowMs)
              return result
            }),
          organizationChanged: Effect.fn("HubFacts.organizationChanged")(function* (
            before: Organization,
            after: Organization
          ) {
            const registered = yield* services.list()
            const consumed = FactNames.filter((fact) => consumersOf(registered, fact).length > 0)
            const statusMay = consumed.includes(organizationStatusChanged)
            const tierMay = consumed.includes(subjectTierChanged)
            if (!statusMay && !tierMay) return
            const roster = yield* directory.roster(after.id)
            // Only the tier needs each member's other organizations.
            const members = yield* Effect.forEach(roster, (entry) =>
              Effect.map(tierMay ? directory.membershipsOf(entry.user.id) : Effect.succeed([]), (memberships) => ({
                email: entry.user.email,
                memberships
              }))
            )
            const nowMs = yield* Clock.currentTimeMillis
            const facts = organizationFacts({ before, after, members, services: registered, changedAt: isoAt(nowMs) })
            yield* enqueueAll(facts, nowMs)
          })
        })
      })
    )
}

/**
 * How the hub retries a fact a service did not accept: the schedule's waits, its last one again and again
 * until the service accepts it (a fact is never given up for a service being down), with up to a tenth of
 * jitter. A 4xx other than 408 and 429 is permanent: the service refused that fact for good.
 */
export const factRetryPolicy = (schedule: ReadonlyArray<number>): RetryPolicy => ({
  baseDelaySeconds: (attemptsBefore) =>
    scheduled(schedule)(Math.min(Math.max(0, attemptsBefore), schedule.length - 1)) ?? 60,
  jitterShare: 0.1,
  minSeconds: 0,
  maxSeconds: 12 * 60 * 60,
  otherStatuses: "retry"
})

/** What the hub sends: the fact itself, `{fact, subject, data}`. */
export const factBody = (row: ProducerEvent): string =>
  JSON.stringify({ fact: row.type, subject: row.subject, data: row.data })

// A fact for a service that is not registered, not live, or no longer declares it: refused for good.
const notForIt = { status: 404 } as const

/**
 * Delivers one fact of the outbox to its service's `POST /api/v1/facts` (the HubEventPublisher port, the
 * relay's way out, pointed at services instead of the hub): signed afresh for each attempt with AUTH-2 over
 * the exact bytes sent, with the service's own signing key, through the hub's guarded calls to services
 * (no redirect followed; loopback only for a service the operator configured).
 */
export const FactPublisher: Layer.Layer<HubEventPublisher, never, Registry | ServiceCalls> = Layer.effect(
  HubEventPublisher,
  Effect.gen(function* () {
    const registry = yield* Registry
    const calls = yield* ServiceCalls
    return HubEventPublisher.of({
      publish: Effect.fn("FactPublisher.publish")(function* (row: ProducerEvent) {
        const found = yield* registry
          .credentials(row.service)
          .pipe(
            Effect.catchTag("NotConfigured", () =>
              Effect.fail(new HubPublishFailed({ reason: "network", message: "The registry is not configured." }))
            )
          )
        if (found === undefined) return notForIt
        const { service, credentials } = found
        if (service.status !== "live" || !(service.consumesFacts ?? []).includes(row.type)) return notForIt
        const body = factBody(row)
        const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const answer = yield* calls
          .send({
            method: "POST",
            url: `${service.baseUrl}/api/v1/facts`,
            headers: {
              "content-type": "application/json",
              "x-platform-timestamp": String(timestamp),
              "x-platform-signature": sign({ secret: credentials.signingKey, timestamp, payload: body })
            },
            body,
            operatorConfigured: service.firstParty
          })
          .pipe(
            Effect.mapError((failure) =>
              failure.reason === "timeout"
                ? new HubPublishFailed({ reason: "timeout", message: "The service did not answer in time." })
                : new HubPublishFailed({ reason: "network", message: "The service could not be reached." })
            )
          )
        return { status: answer.status, retryAfter: answer.headers["retry-after"] }
      })
    })
  })
)
