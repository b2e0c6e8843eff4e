import { Array as Arr, Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { verify } from "../auth/Signature.ts"
import { Forbidden, PayloadTooLarge, RateLimited, Unauthorized, ValidationError } from "../kernel/Errors.ts"
import { bodyIssue, schemaIssues } from "../kernel/FieldIssue.ts"
import { Hub } from "../kernel/Limits.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { Directory } from "./Directory.ts"
import { EventCatalog } from "./EventCatalog.ts"
import {
  checkDeliveryHeaders,
  checkEventIdHeader,
  checkStorable,
  claimedProducer,
  InboundEvent,
  isUsageType,
  usageRefusal,
  type EventHeaders
} from "./Events.ts"
import { EventHandOver } from "./EventHandOver.ts"
import { EventStore, type StoredEvent } from "./EventStore.ts"
import { EventWakeup } from "./EventWakeup.ts"
import { Registry } from "./Registry.ts"
import { SigningKeyCache } from "./SigningKeyCache.ts"

/** The body is not JSON (400 INVALID_JSON). */
export class InvalidJson extends Schema.TaggedError<InvalidJson>()("InvalidJson", {}) {}

/** The type is not in the catalog (400 UNKNOWN_EVENT_TYPE, permanent). */
export class UnknownEventType extends Schema.TaggedError<UnknownEventType>()("UnknownEventType", {
  type: Schema.String
}) {}

export type IngestError =
  PayloadTooLarge | InvalidJson | Unauthorized | RateLimited | ValidationError | UnknownEventType | Forbidden

/** `accepted`: stored now (202); `duplicate`: stored before (200, stop retrying). */
export interface IngestOutcome {
  readonly status: "accepted" | "duplicate"
  readonly id: string
}

/**
 * The per-service quota: undefined when the request may go on, else the seconds to wait (429 Retry-After).
 * The budget is kept by the caller (apps/server/hub/HubEventsRuntime.ts takes it from `RateLimits`, shared by every instance).
 */
export type ServiceQuota = (service: string) => Effect.Effect<number | undefined>

export interface EventIngestConfig {
  readonly quota: ServiceQuota
  /** Default 64 KB. */
  readonly maxBodyBytes?: number | undefined
}

// A valid envelope is decoded once, stopping at a first issue; only a refused one is decoded again for all.
const decodeEvent = Schema.decodeUnknownResult(InboundEvent)
const eventIssues = Schema.decodeUnknownResult(InboundEvent, { errors: "all" })
const textDecoder = new TextDecoder("utf-8", { fatal: true })

/**
 * Event delivery, in an order where nothing is parsed before the size check and nothing is trusted before
 * the signature check: size (413); the delivery headers (400); JSON (400 INVALID_JSON, read only to find
 * the producer whose key verifies it); AUTH-2 with that producer's signing key (401, the same for an
 * unknown or suspended producer, a bad or a stale signature); the producer's quota (429); the envelope
 * (400), its text and nesting storable (400); the header id against the body id (400); the catalog: type known (400 UNKNOWN_EVENT_TYPE), owned
 * by this producer (403); `data` against the type's schema (400 with details); the usage rule (400/403);
 * then insert-if-absent on (service, id): `accepted` only once the row is committed, else `duplicate`.
 * A notification is stored for the processor (EventProcessor) and wakes it; while this instance's processor
 * takes hand-overs (EventHandOver) it is stored claimed and handed to it in memory. An event of any other
 * type has nothing left to do after the acknowledgement, so it is stored already processed.
 */
export class EventIngest extends Context.Service<
  EventIngest,
  {
    readonly ingest: (delivery: {
      readonly headers: EventHeaders
      readonly body: Uint8Array
    }) => Effect.Effect<IngestOutcome, IngestError>
  }
>()("core/hub/EventIngest") {
  static readonly layer = (config: EventIngestConfig) =>
    Layer.effect(
      EventIngest,
      Effect.gen(function* () {
        const registry = yield* Registry
        const catalog = yield* EventCatalog
        const store = yield* EventStore
        const directory = yield* Directory
        const wakeup = yield* EventWakeup
        const handOver = Option.getOrUndefined(yield* Effect.serviceOption(EventHandOver))
        const maxBodyBytes = config.maxBodyBytes ?? Hub.eventBodyBytes

        const keyCache = Option.getOrUndefined(yield* Effect.serviceOption(SigningKeyCache))

        /** The producer's signing key when it may deliver; suspended or unknown producers have none. */
        const readSigningKey = (service: string) =>
          Effect.map(
            Effect.catchTag(registry.credentials(service), "NotConfigured", () => Effect.succeed(undefined)),
            (found) =>
              found === undefined || found.service.status === "suspended" ? undefined : found.credentials.signingKey
          )
        // Kept between deliveries when the server provides a cache; the same answers either way. The read is
        // built only when the cache has no key.
        const signingKey = (service: string) =>
          keyCache === undefined
            ? readSigningKey(service)
            : keyCache.get(
                service,
                Effect.suspend(() => readSigningKey(service))
              )

        const ingest = Effect.fnUntraced(function* (delivery: {
          readonly headers: EventHeaders
          readonly body: Uint8Array
        }) {
          const { headers, body } = delivery
          if (body.byteLength > maxBodyBytes) return yield* new PayloadTooLarge({ limitBytes: maxBodyBytes })
          const headerProblem = checkDeliveryHeaders(headers)
          if (headerProblem !== undefined) return yield* headerProblem

          let json: unknown
          try {
            json = JSON.parse(textDecoder.decode(body))
          } catch {
            return yield* new InvalidJson()
          }

          const producer = claimedProducer(json)
          const secret = producer === undefined ? undefined : yield* signingKey(producer)
          const nowMs = yield* Clock.currentTimeMillis
          const signed = verify({
            secret,
            timestamp: headers.timestamp,
            signature: headers.signature,
            payload: body,
            nowSeconds: Math.floor(nowMs / 1000)
          })
          if (!signed || producer === undefined) return yield* new Unauthorized()

          const wait = yield* config.quota(producer)
          if (wait !== undefined) return yield* new RateLimited({ retryAfterSeconds: wait })

          const decoded = decodeEvent(json)
          if (decoded._tag === "Failure") {
            const all = eventIssues(json)
            return yield* new ValidationError({
              message: "The event failed validation.",
              details: schemaIssues("body", all._tag === "Failure" ? all.failure.issue : decoded.failure.issue)
            })
          }
          const event = decoded.success
          const textProblem = checkStorable(event)
          if (textProblem !== undefined) return yield* textProblem
          const idProblem = checkEventIdHeader(headers.eventId!, event)
          if (idProblem !== undefined) return yield* idProblem

          const entry = yield* catalog.find(event.type)
          if (entry === undefined) return yield* new UnknownEventType({ type: event.type })
          if (entry.producer !== producer) {
            return yield* new Forbidden({ message: "The catalog does not assign this event type to this service." })
          }
          const issues = catalog.checkData(entry, event.data)
          if (Arr.isReadonlyArrayNonEmpty(issues)) {
            return yield* new ValidationError({ message: "The event's data failed validation.", details: issues })
          }
          if (isUsageType(event.type)) {
            const installation =
              event.subject.companyId === undefined
                ? undefined
                : yield* directory.findInstallation(event.subject.companyId, producer)
            const refusal = usageRefusal(event, installation)
            if (refusal === "no_organization") {
              return yield* new ValidationError({
                message: "A usage event must name an organization.",
                details: [bodyIssue("subject.companyId", "is required for usage events")]
              })
            }
            if (refusal === "not_installed") {
              return yield* new Forbidden({ message: "The organization has no active installation of this app." })
            }
          }

          const stored = {
            service: producer,
            id: event.id,
            type: event.type,
            occurredAt: event.occurredAt,
            subject: event.subject,
            data: event.data,
            deliveryId: headers.delivery!,
            receivedAt: isoAt(nowMs)
          }
          // A notification goes to this instance's processor in memory, stored already claimed, when one is taking.
          const claimedUntil = entry.isNotification ? handOver?.leaseFor(nowMs) : undefined
          const inserted = yield* store.insert({
            ...stored,
            // Only a notification has work after the acknowledgement; any other type is done once stored.
            processed: !entry.isNotification,
            claimedUntil
          })
          if (inserted === "new" && entry.isNotification) {
            yield* claimedUntil === undefined
              ? wakeup.wake
              : handOver!.handOver({
                  ...stored,
                  status: "accepted",
                  attempts: 1,
                  processedAt: null
                } satisfies StoredEvent)
          }
          return { status: inserted === "new" ? "accepted" : "duplicate", id: event.id } satisfies IngestOutcome
        })

        return EventIngest.of({ ingest })
      })
    )
}
