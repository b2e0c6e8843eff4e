import { Array as Arr, Clock, Context, Effect, Layer, Schema } from "effect"
import { verify } from "../auth/Signature.ts"
import { InvalidJson } from "../hub/EventIngest.ts"
import {
  FactBody,
  factData,
  isFactName,
  organizationStatusChanged,
  type FactName,
  type OrganizationStatusChanged
} from "../kernel/Facts.ts"
import { NotConfigured, Unauthorized, ValidationError } from "../kernel/Errors.ts"
import { bodyIssue, schemaIssues } from "../kernel/FieldIssue.ts"
import { Transactions } from "../kernel/Transactions.ts"
import { OrganizationStatuses } from "./OrganizationStatuses.ts"

/**
 * The facts the decisions service and the task inbox act on, as their manifests declare them
 * (`consumesFacts`): an organization that is not active has its people's credentials refused.
 */
export const consumedFacts: ReadonlyArray<FactName> = [organizationStatusChanged]

/** One delivery to `POST /api/v1/facts`: the two signature headers and the raw body, as they arrived. */
export interface FactDelivery {
  readonly signature: string | undefined
  readonly timestamp: string | undefined
  readonly body: Uint8Array
}

export interface FactIntakeConfig {
  /** The service's own signing key (the one it signs its events with, and the hub holds for it). */
  readonly signingKey: string | undefined
}

export type FactRefusal = NotConfigured | Unauthorized | InvalidJson | ValidationError

const textDecoder = new TextDecoder("utf-8", { fatal: true })
const decodeBody = Schema.decodeUnknownResult(FactBody, { errors: "all" })

const invalid = (message: string, issues: ReturnType<typeof schemaIssues>) =>
  new ValidationError({ message, details: issues })

/**
 * A service's intake of the hub's facts. The signature is checked first, over the raw bytes (AUTH-2 with the
 * service's own signing key; a bad or stale one is the same 401 whatever was wrong); without a signing key
 * nothing is accepted (NotConfigured: the hub keeps the fact and tries again). Then the body: JSON, the
 * fact's shape, a fact this service consumes (any other is refused, naming those it takes), and its data.
 * An accepted fact is recorded in one unit of work; the same fact again changes nothing.
 */
export class FactIntake extends Context.Service<
  FactIntake,
  { readonly receive: (delivery: FactDelivery) => Effect.Effect<void, FactRefusal> }
>()("core/events/FactIntake") {
  static readonly layer = (
    config: FactIntakeConfig
  ): Layer.Layer<FactIntake, never, OrganizationStatuses | Transactions> =>
    Layer.effect(
      FactIntake,
      Effect.gen(function* () {
        const statuses = yield* OrganizationStatuses
        const transactions = yield* Transactions
        const apply = (email: string, data: OrganizationStatusChanged) =>
          transactions.atomically(
            statuses.record({
              organizationId: data.organizationId,
              email,
              status: data.status,
              changedAt: data.changedAt
            })
          )
        return FactIntake.of({
          receive: Effect.fn("FactIntake.receive")(function* (delivery: FactDelivery) {
            if (config.signingKey === undefined || config.signingKey.length === 0) {
              return yield* new NotConfigured({ message: "The service is not configured yet." })
            }
            const signed = verify({
              secret: config.signingKey,
              timestamp: delivery.timestamp,
              signature: delivery.signature,
              payload: delivery.body,
              nowSeconds: Math.floor((yield* Clock.currentTimeMillis) / 1000)
            })
            if (!signed) return yield* new Unauthorized()
            let json: unknown
            try {
              json = JSON.parse(textDecoder.decode(delivery.body))
            } catch {
              return yield* new InvalidJson()
            }
            const body = decodeBody(json)
            if (body._tag === "Failure")
              return yield* invalid("The fact failed validation.", schemaIssues("body", body.failure.issue))
            const { fact, subject, data } = body.success
            if (!isFactName(fact) || !consumedFacts.includes(fact)) {
              const message = `Unknown fact "${fact.slice(0, 80)}": this service consumes ${consumedFacts.join(", ")}.`
              return yield* new ValidationError({ message, details: [bodyIssue("fact", message)] })
            }
            const decoded = Schema.decodeUnknownResult(factData[organizationStatusChanged], { errors: "all" })(data)
            if (decoded._tag === "Failure") {
              const issues = Arr.map(schemaIssues("body", decoded.failure.issue), (issue) => ({
                ...issue,
                field: issue.field === "" ? "data" : `data.${issue.field}`
              }))
              return yield* invalid("The fact's data failed validation.", issues)
            }
            yield* apply(subject.email, decoded.success)
          })
        })
      })
    )
}
