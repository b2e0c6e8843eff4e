import { Array as Arr, Predicate, Schema } from "effect"
import { Email } from "../kernel/Email.ts"
import { ValidationError } from "../kernel/Errors.ts"
import { bodyIssue, headerIssue, type FieldIssue } from "../kernel/FieldIssue.ts"
import { isUlid } from "../kernel/Ids.ts"
import { isIsoDateTime } from "../kernel/Timestamp.ts"
import type { Installation } from "./Directory.ts"
import { eventTypeMax, eventTypePattern, fieldName } from "./EventCatalog.ts"
import { serviceIdPattern } from "./Registry.ts"

/**
 * Event delivery: the body's schema
 * and the ingest rules that need no I/O. The use case that runs them in order is EventIngest.
 */

const bounded = (max: number) => Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(max))

/** Unknown fields are ignored (changes within v1 are additive). */
export const InboundEvent = Schema.Struct({
  id: Schema.String.check(Schema.makeFilter((s: string) => isUlid(s) || "must be a ULID")),
  type: bounded(eventTypeMax).check(Schema.isPattern(eventTypePattern)),
  service: bounded(64),
  occurredAt: Schema.String.check(
    Schema.makeFilter((s: string) => isIsoDateTime(s) || "must be an RFC 3339 date-time")
  ),
  subject: Schema.Struct({
    email: Email,
    companyId: Schema.optionalKey(bounded(64))
  }),
  data: Schema.Unknown,
  contractVersion: Schema.Literal("v1")
}).annotate({ identifier: "InboundEvent" })
export type InboundEvent = typeof InboundEvent.Type

/** The four required headers, lower case as Node presents them. */
export const EventHeaderNames = {
  signature: "x-platform-signature",
  timestamp: "x-platform-timestamp",
  eventId: "x-platform-event-id",
  delivery: "x-platform-delivery"
} as const

export interface EventHeaders {
  readonly signature: string | undefined
  readonly timestamp: string | undefined
  readonly eventId: string | undefined
  readonly delivery: string | undefined
}

/** A header is one value of bounded length; a header sent twice (Node joins them) is refused. */
const headerMax = 128

/**
 * `X-Platform-Event-Id` and `X-Platform-Delivery` must be present: a 400 naming the header. (A missing
 * signature or timestamp is a missing credential, answered by the signature check's 401.)
 */
export const checkDeliveryHeaders = (headers: EventHeaders): ValidationError | undefined => {
  const bad = (
    [
      ["X-Platform-Event-Id", headers.eventId],
      ["X-Platform-Delivery", headers.delivery]
    ] as const
  ).filter(([, value]) => value === undefined || value.length === 0 || value.length > headerMax || value.includes(","))
  const issues = bad.map(([name]) => headerIssue(name, `is required (1 to ${headerMax} characters)`))
  return Arr.isReadonlyArrayNonEmpty(issues)
    ? new ValidationError({ message: "The event delivery headers are missing or invalid.", details: issues })
    : undefined
}

/**
 * The producer the body names, read before anything is trusted: only to choose the key that verifies the
 * signature. Undefined when the body names none, or a name no service can have (then nothing can verify
 * it: 401), so unauthenticated input reaches the service store only in the shape of a service id.
 */
export const claimedProducer = (body: unknown): string | undefined => {
  if (!Predicate.isObject(body) || Array.isArray(body) || !Object.hasOwn(body, "service")) return undefined
  const service = (body as Record<string, unknown>)["service"]
  return typeof service === "string" && serviceIdPattern.test(service) ? service : undefined
}

/** How deep `data` may nest: deeper JSON overflows the stack of whatever copies or stores it (and jsonb's). */
export const dataDepthMax = 64
/** At most this many unstorable places are reported. */
const maxTextIssues = 20

/** U+0000 or a surrogate without its pair: Postgres refuses both in text and jsonb. */
const unstorable = (text: string): boolean =>
  text.includes("\u0000") || /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)

/**
 * Whether the event can be stored as it came, the same on every adapter: JSON may escape a NUL or half a
 * surrogate pair, and may nest deeper than any stack copies; accepted by memory, such an event would be a
 * 500 on SQL that the producer retries for 12 hours. Refused as a permanent 400 instead. Walked without
 * recursion, since the depth is what is being checked.
 */
export const checkStorable = (event: InboundEvent): ValidationError | undefined => {
  const issues: Array<FieldIssue> = []
  const issue = (path: ReadonlyArray<string>, message: string) => issues.push(bodyIssue(fieldName(path), message))
  if (event.subject.companyId !== undefined && unstorable(event.subject.companyId)) {
    issue(["subject", "companyId"], "must not contain U+0000 or an unpaired surrogate")
  }
  const pending: Array<{ readonly value: unknown; readonly path: ReadonlyArray<string> }> = [
    { value: event.data, path: ["data"] }
  ]
  while (pending.length > 0 && issues.length < maxTextIssues) {
    const { value, path } = pending.pop()!
    if (typeof value === "string") {
      if (unstorable(value)) issue(path, "must not contain U+0000 or an unpaired surrogate")
    } else if (Predicate.isObjectOrArray(value)) {
      if (path.length > dataDepthMax) {
        issue(path.slice(0, dataDepthMax + 1), `must not nest deeper than ${dataDepthMax} levels`)
        break
      }
      for (const [key, child] of Object.entries(value)) {
        if (unstorable(key)) issue(path, "must not have a key with U+0000 or an unpaired surrogate")
        pending.push({ value: child, path: [...path, key] })
      }
    }
  }
  return Arr.isReadonlyArrayNonEmpty(issues)
    ? new ValidationError({ message: "The event holds text or nesting that cannot be stored.", details: issues })
    : undefined
}

/**
 * The signature covers the body but not the headers, so a captured request could be replayed with a new
 * `X-Platform-Event-Id`; the two must agree. Refused as 400 VALIDATION_ERROR after the signature check: the
 * request is authentic but inconsistent, a permanent producer bug rather than a credential problem (a 401
 * would send the producer's operators rotating a key that is fine). Dedupe is on the body's id either way.
 */
export const checkEventIdHeader = (headerId: string, event: InboundEvent): ValidationError | undefined =>
  headerId === event.id
    ? undefined
    : new ValidationError({
        message: "X-Platform-Event-Id must equal the event's id.",
        details: [headerIssue("X-Platform-Event-Id", "must equal the body's id")]
      })

/**
 * `<slug>.notification.settled`: what the producer's notifications leading to the event's `url` asked for is
 * settled (a decision answered); the processor marks them done for everyone (core/hub/EventProcessor.ts).
 */
export const isSettlementType = (type: string): boolean => /^[a-z0-9]+\.notification\.settled$/.test(type)

/** `<slug>.usage.recorded`: a registered app's usage, which must name an organization that installed it. */
export const isUsageType = (type: string): boolean => /^[a-z0-9]+\.usage\.recorded$/.test(type)

/**
 * A usage event naming no organization is 400; one naming an organization with no active
 * install of that app (never installed, or uninstalled) is 403 FORBIDDEN. Both permanent.
 */
export const usageRefusal = (
  event: InboundEvent,
  installation: Installation | undefined
): "no_organization" | "not_installed" | undefined => {
  if (event.subject.companyId === undefined) return "no_organization"
  if (installation === undefined || !installation.active) return "not_installed"
  return undefined
}
