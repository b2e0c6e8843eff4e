import { assert, describe, layer } from "@effect/vitest"
import { Effect, Result, type Schema } from "effect"
import fc from "fast-check"
import { ProjectPatchBody } from "../../core/tasks/DirectoryInput.ts"
import { ProposalBody, ProposalRejectBody } from "../../core/tasks/ProposalInput.ts"
import { RecordStore } from "../../core/tasks/RecordStore.ts"
import { ApiKeyCreateBody, SettingsPatchBody } from "../../core/tasks/SettingsInput.ts"
import { CreateTaskBody, PatchTaskBody } from "../../core/tasks/TaskInput.ts"
import {
  AcceptTaskBody,
  BulkTriageBody,
  DelegateTaskBody,
  NeedsInfoBody,
  RejectTaskBody
} from "../../core/tasks/TriageInput.ts"
import { request } from "../support/Http.ts"
import { decodeBody } from "../support/TaskInputs.ts"
import { opsKey, tasksMemoryData, tasksServer, TasksServer } from "../support/TasksStack.ts"

/**
 * Any JSON body on every route of the task inbox that takes one, through the HTTP layer: never a 5xx, and the
 * contract and the core agree. A body the core's schema refuses is answered 400 with exactly the fields that
 * decoding names; a body it takes is never refused for its shape, only (400) on a field naming a record that
 * does not exist, or (404) for a task or proposal that is not the caller's.
 */

/** Values a field may be sent: right, nearly right and wrong, of every JSON type. */
const value: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    "",
    "  ",
    "x",
    " Title ",
    "HIGH",
    "p4",
    "In progress",
    "needs more info",
    "ai agent",
    "accept",
    " DONE ",
    "slack",
    "Weekly",
    "2026-02-28",
    "2026-02-30",
    "2026-01-31T10:00:00Z",
    "constructor",
    "__proto__",
    "ops-bot@example.com",
    "create_task",
    "change_status",
    "change_estimate",
    "archive_task",
    "x".repeat(121),
    "d".repeat(501)
  ),
  fc.string({ maxLength: 12 }),
  fc.integer({ min: -5, max: 5 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.constantFrom("a", "recUnknownTask000", 1), { maxLength: 3 }),
  fc.jsonValue({ maxDepth: 2 })
)

const bodyOf = (keys: ReadonlyArray<string>, nested: Record<string, fc.Arbitrary<unknown>> = {}) =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.dictionary(fc.constantFrom(...keys, "extra"), fc.oneof(value, ...Object.values(nested)))
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) }
  )

const change = fc.dictionary(
  fc.constantFrom(
    "action",
    "title",
    "description",
    "priority",
    "status",
    "assignedTo",
    "dueDate",
    "startDate",
    "hoursEstimated"
  ),
  value
)
const notifications = fc.dictionary(fc.constantFrom("channel", "frequency"), value)

/** Fields a body may name a record by: refused (400) only when the record is missing. */
const lookedUp = new Set([
  "assignedTo",
  "requestedBy",
  "project",
  "projectId",
  "projectIds",
  "clientId",
  "accountManager",
  "outcomeId",
  "meetingId",
  "proposedChangesObj.assignedTo"
])

interface Route {
  readonly method: string
  readonly path: (ids: { readonly task: string; readonly project: string }) => string
  readonly schema: Schema.Decoder<unknown>
  readonly body: fc.Arbitrary<unknown>
}

const routes: ReadonlyArray<Route> = [
  {
    method: "POST",
    path: () => "/api/tasks",
    schema: CreateTaskBody,
    body: bodyOf(["title", "description", "priority", "origin", "originDetail", "assignedTo", "requestedBy", "project"])
  },
  {
    method: "PATCH",
    path: (ids) => `/api/tasks/${ids.task}`,
    schema: PatchTaskBody,
    body: bodyOf([
      "title",
      "description",
      "priority",
      "status",
      "triageStatus",
      "triageNotes",
      "dueDate",
      "startDate",
      "hoursEstimated",
      "assignedTo",
      "project",
      "originDetail"
    ])
  },
  {
    method: "POST",
    path: (ids) => `/api/tasks/${ids.task}/accept`,
    schema: AcceptTaskBody,
    body: bodyOf(["projectId", "status"])
  },
  { method: "POST", path: (ids) => `/api/tasks/${ids.task}/reject`, schema: RejectTaskBody, body: bodyOf(["reason"]) },
  { method: "POST", path: (ids) => `/api/tasks/${ids.task}/needs-info`, schema: NeedsInfoBody, body: bodyOf(["note"]) },
  {
    method: "POST",
    path: (ids) => `/api/tasks/${ids.task}/delegate`,
    schema: DelegateTaskBody,
    body: bodyOf(["assignedTo", "reason"])
  },
  {
    method: "POST",
    path: () => "/api/tasks/bulk",
    schema: BulkTriageBody,
    body: bodyOf(["taskIds", "action", "projectIds", "reason"])
  },
  {
    method: "POST",
    path: () => "/api/proposals",
    schema: ProposalBody,
    body: bodyOf(["taskId", "projectId", "outcomeId", "meetingId", "type", "name", "proposedChangesObj"], { change })
  },
  {
    method: "POST",
    path: () => "/api/proposals/recNoSuchProposal0/reject",
    schema: ProposalRejectBody,
    body: bodyOf(["reason"])
  },
  {
    method: "PATCH",
    path: (ids) => `/api/projects/${ids.project}`,
    schema: ProjectPatchBody,
    body: bodyOf(["status", "priority", "startDate", "endDate", "clientId", "accountManager"])
  },
  {
    method: "PATCH",
    path: () => "/api/settings",
    schema: SettingsPatchBody,
    body: bodyOf(["showSentNav", "notifications", "notifications.channel", "notifications.frequency"], {
      notifications
    })
  },
  { method: "POST", path: () => "/api/settings/api-keys", schema: ApiKeyCreateBody, body: bodyOf(["name"]) }
]

describe("task inbox bodies (property)", () =>
  layer(tasksServer(tasksMemoryData), { excludeTestServices: true, timeout: 60_000 })((it) => {
    it.effect(
      "any JSON body: never a 5xx; refused with exactly the fields the core's schema names, or taken",
      () =>
        Effect.gen(function* () {
          const { baseUrl } = yield* TasksServer
          const records = yield* RecordStore
          const project = yield* records.create("projects", { name: "Fuzz", status: "Active" })
          const send = (method: string, path: string, body: unknown) =>
            request(`${baseUrl}${path}`, {
              method,
              headers: { "content-type": "application/json", "x-api-key": opsKey.key },
              body: JSON.stringify(body)
            })
          const task = (yield* send("POST", "/api/tasks", { title: "Target" })).json.task.id as string
          const ids = { task, project: project.id }
          for (const route of routes) {
            yield* Effect.promise(() =>
              fc.assert(
                fc.asyncProperty(route.body, async (sent) => {
                  // What the server reads: the JSON text of the body.
                  const body = JSON.parse(JSON.stringify(sent) ?? "null") as unknown
                  const answer = await Effect.runPromise(send(route.method, route.path(ids), body))
                  const where = `${route.method} ${route.path(ids)} ${JSON.stringify(body)}: ${answer.text}`
                  assert.isBelow(answer.status, 500, where)
                  const decoded = decodeBody(route.schema, body)
                  if (Result.isFailure(decoded)) {
                    assert.strictEqual(answer.status, 400, where)
                    assert.deepStrictEqual(answer.json, { error: "Validation failed", fields: decoded.failure }, where)
                  } else if (answer.status === 400) {
                    for (const field of Object.keys(answer.json.fields)) assert.isTrue(lookedUp.has(field), where)
                  } else {
                    assert.include([200, 201, 404], answer.status, where)
                  }
                }),
                { numRuns: 60 }
              )
            )
          }
        }),
      120_000
    )
  }))
