import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import {
  decisionsErrorResponse,
  envelopeAnswers,
  failureResponse,
  hubErrorResponse,
  type CodeDialect,
  type EnvelopeError,
  type ErrorAnswers
} from "../../adapters/http/ErrorResponse.ts"
import {
  tasksAnswers,
  tasksErrorResponse,
  tasksFailureResponse,
  type TasksDomainError
} from "../../adapters/http/tasks/TasksErrors.ts"
import {
  InvalidActionTransition,
  InvalidTransition,
  UnknownRole,
  UnknownTemplate
} from "../../core/decisions/Errors.ts"
import { InvalidJson, UnknownEventType } from "../../core/hub/EventIngest.ts"
import { EmbedNotConsented, ServiceRefused } from "../../core/hub/Workspace.ts"
import { IdempotencyConflict } from "../../core/idempotency/Idempotency.ts"
import {
  Conflict,
  Forbidden,
  NotConfigured,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  Unauthorized,
  Unavailable,
  UpstreamError,
  ValidationError,
  bodyIssue,
  pathIssue,
  queryIssue
} from "../../core/kernel/index.ts"
import { InvalidFields, ProposalNotOpen } from "../../core/tasks/Errors.ts"

/** An error no mapping knows. */
class Unmapped extends Schema.TaggedError<Unmapped>()("Unmapped", {}) {}

const bodyOf = (response: HttpServerResponse.HttpServerResponse): any =>
  response.body._tag === "Uint8Array" ? JSON.parse(new TextDecoder().decode(response.body.body)) : undefined

/**
 * One instance of every error the envelope dialects answer, with the status and code each dialect gives it.
 * The table is keyed by the union's tags, so it cannot leave an error out either.
 */
const envelopeCases: {
  readonly [Tag in EnvelopeError["_tag"]]: readonly [
    error: Extract<EnvelopeError, { readonly _tag: Tag }>,
    status: number,
    hubCode: string,
    decisionsCode: string
  ]
} = {
  ValidationError: [new ValidationError({ message: "Bad name." }), 400, "VALIDATION_ERROR", "validation_error"],
  Unauthorized: [new Unauthorized(), 401, "UNAUTHORIZED", "UNAUTHORIZED"],
  Forbidden: [new Forbidden({}), 403, "FORBIDDEN", "FORBIDDEN"],
  NotFound: [new NotFound({}), 404, "NOT_FOUND", "NOT_FOUND"],
  Conflict: [new Conflict({ message: "Taken." }), 409, "CONFLICT", "CONFLICT"],
  PayloadTooLarge: [new PayloadTooLarge({ limitBytes: 10 }), 413, "PAYLOAD_TOO_LARGE", "payload_too_large"],
  RateLimited: [new RateLimited({ retryAfterSeconds: 3 }), 429, "RATE_LIMITED", "RATE_LIMITED"],
  NotConfigured: [new NotConfigured({}), 501, "NOT_CONFIGURED", "NOT_CONFIGURED"],
  UpstreamError: [new UpstreamError({}), 502, "UPSTREAM_ERROR", "UPSTREAM_ERROR"],
  Unavailable: [new Unavailable({}), 503, "UNAVAILABLE", "UNAVAILABLE"],
  IdempotencyConflict: [new IdempotencyConflict(), 409, "idempotency_conflict", "idempotency_conflict"],
  UnknownRole: [new UnknownRole({ validRoles: ["ops"] }), 400, "unknown_role", "unknown_role"],
  UnknownTemplate: [new UnknownTemplate({ validTemplates: [] }), 400, "unknown_template", "unknown_template"],
  InvalidTransition: [new InvalidTransition({ status: "resolved" }), 409, "invalid_transition", "invalid_transition"],
  InvalidActionTransition: [
    new InvalidActionTransition({ status: "succeeded" }),
    409,
    "invalid_transition",
    "invalid_transition"
  ],
  InvalidJson: [new InvalidJson(), 400, "INVALID_JSON", "INVALID_JSON"],
  UnknownEventType: [new UnknownEventType({ type: "a.b.c" }), 400, "UNKNOWN_EVENT_TYPE", "UNKNOWN_EVENT_TYPE"],
  EmbedNotConsented: [new EmbedNotConsented(), 403, "EMBED_NOT_CONSENTED", "EMBED_NOT_CONSENTED"],
  ServiceRefused: [
    new ServiceRefused({ status: 422, code: "nope", message: "Not now." }),
    422,
    "VALIDATION_ERROR",
    "VALIDATION_ERROR"
  ]
}

const tasksCases: { readonly [Tag in TasksDomainError["_tag"]]: readonly [TasksDomainError, number] } = {
  InvalidFields: [new InvalidFields({ fields: { title: "Required" } }), 400],
  Unauthorized: [new Unauthorized(), 401],
  Forbidden: [new Forbidden({}), 403],
  NotFound: [new NotFound({}), 404],
  ProposalNotOpen: [new ProposalNotOpen({ aiStatus: "Accepted" }), 409],
  UpstreamError: [new UpstreamError({}), 502]
}

describe("domain errors reach HTTP through one exhaustive mapping per dialect", () => {
  it("does not compile a mapping that leaves an error out, nor an answer for an error that is not mapped", () => {
    // These lines are checked by `tsc -p .`: each must be a type error, or the check itself fails. The Effect
    // language service sees the same unhandled errors; it is told they are meant.
    const compileChecks = () => {
      const { NotFound: _left, ...envelopeWithoutNotFound } = envelopeAnswers
      // @ts-expect-error the envelope mapping must answer every error of the union
      const incomplete: ErrorAnswers<EnvelopeError, CodeDialect> = envelopeWithoutNotFound
      const { ProposalNotOpen: _gone, ...tasksWithoutProposal } = tasksAnswers
      // @ts-expect-error the task inbox mapping must answer every error of its union
      const incompleteTasks: ErrorAnswers<TasksDomainError, void> = tasksWithoutProposal
      // @ts-expect-error a handler failing with an unmapped error cannot be answered by the decisions dialect
      // @effect-diagnostics-next-line missingEffectError:off
      const decisions = Effect.catch(Effect.fail(new Unmapped()), decisionsErrorResponse)
      // @ts-expect-error nor by the hub's
      // @effect-diagnostics-next-line missingEffectError:off
      const hub = Effect.catch(Effect.fail(new Unmapped()), hubErrorResponse)
      // @ts-expect-error nor by the task inbox's
      // @effect-diagnostics-next-line missingEffectError:off
      const tasks = Effect.catch(Effect.fail(new Unmapped()), tasksErrorResponse)
      // @ts-expect-error a decisions error is not one the hub answers
      // @effect-diagnostics-next-line missingEffectError:off
      const crossed = hubErrorResponse(new UnknownRole({ validRoles: [] }))
      return [incomplete, incompleteTasks, decisions, hub, tasks, crossed]
    }
    assert.isFunction(compileChecks)
  })

  it.effect("answers every envelope error with its status and code, in both spellings", () =>
    Effect.gen(function* () {
      for (const [error, status, hubCode, decisionsCode] of Object.values(envelopeCases)) {
        for (const [dialect, code] of [
          ["hub", hubCode],
          ["decisions", decisionsCode]
        ] as const) {
          const response = yield* failureResponse(error, dialect)
          assert.strictEqual(response.status, status, `${error._tag} ${dialect}`)
          assert.strictEqual(bodyOf(response).error.code, code, `${error._tag} ${dialect}`)
        }
      }
      const limited = yield* decisionsErrorResponse(new RateLimited({ retryAfterSeconds: 3 }))
      assert.strictEqual(limited.headers["retry-after"], "3")
    })
  )

  it.effect("answers every task inbox error with its status in the {error} shape", () =>
    Effect.gen(function* () {
      for (const [error, status] of Object.values(tasksCases)) {
        const response = yield* tasksErrorResponse(error)
        assert.strictEqual(response.status, status, error._tag)
        assert.isString(bodyOf(response).error, error._tag)
      }
      const invalid = yield* tasksErrorResponse(new InvalidFields({ fields: { title: "Required" } }))
      assert.deepStrictEqual(bodyOf(invalid), { error: "Validation failed", fields: { title: "Required" } })
    })
  )

  it.effect("answers a validation error's details as the core built them, one entry for the whole body if none", () =>
    Effect.gen(function* () {
      const issues = [
        queryIssue("cursor", "is not a cursor this list returned"),
        pathIssue("id", "is too long")
      ] as const
      const named = yield* hubErrorResponse(new ValidationError({ message: "Bad request.", details: issues }))
      assert.deepStrictEqual(bodyOf(named).error.details, issues)
      const unnamed = yield* decisionsErrorResponse(new ValidationError({ message: "Bad request." }))
      assert.deepStrictEqual(bodyOf(unnamed).error.details, [{ in: "body", field: "", message: "Bad request." }])
    })
  )

  it.effect("relays an app's validation details only in the shape every validation answer carries", () =>
    Effect.gen(function* () {
      const kept = [bodyIssue("amount", "must be positive")]
      const relayed = yield* hubErrorResponse(
        new ServiceRefused({ status: 400, code: "VALIDATION_ERROR", message: "Bad amount.", details: kept })
      )
      assert.deepStrictEqual(bodyOf(relayed).error.details, kept)
      const foreign = yield* hubErrorResponse(
        new ServiceRefused({ status: 422, code: "nope", message: "Bad amount.", details: { field: "amount" } })
      )
      assert.strictEqual(foreign.status, 422)
      assert.deepStrictEqual(bodyOf(foreign).error.details, [{ in: "body", field: "", message: "Bad amount." }])
      const otherCode = yield* hubErrorResponse(
        new ServiceRefused({ status: 409, code: "CONFLICT", message: "Taken.", details: { holder: "x" } })
      )
      assert.deepStrictEqual(bodyOf(otherCode).error.details, { holder: "x" })
    })
  )

  it.effect("answers an error of unknown type INTERNAL_ERROR (500) without detail", () =>
    Effect.gen(function* () {
      const envelope = yield* failureResponse(new Unmapped(), "decisions")
      assert.strictEqual(envelope.status, 500)
      assert.deepStrictEqual(Object.keys(bodyOf(envelope).error).sort(), ["code", "message"])
      const tasks = yield* tasksFailureResponse(new Unmapped())
      assert.strictEqual(tasks.status, 500)
    })
  )
})
