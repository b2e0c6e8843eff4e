import { Schema } from "effect"
import { inputSchema, type Loose } from "./InputDecoding.ts"
import { Enumerated, requiredKey, StatusValue } from "./TaskFields.ts"

/** The bodies of triage: accept, reject, needs-info, delegate, and bulk triage (docs/tasks.md, "Validation"). */

/** POST /api/tasks/{id}/accept: the project to file it under (checked to exist by the use case). */
export const AcceptTaskBody = inputSchema(
  "AcceptTaskBody",
  Schema.Struct({ projectId: requiredKey(Schema.String), status: Schema.optionalKey(StatusValue) })
)
export type AcceptTaskBody = Loose<typeof AcceptTaskBody.Encoded>

export const RejectTaskBody = Schema.Struct({ reason: requiredKey(Schema.String) }).annotate({
  identifier: "RejectTaskBody"
})
export const NeedsInfoBody = Schema.Struct({ note: requiredKey(Schema.String) }).annotate({
  identifier: "NeedsInfoBody"
})

/** POST /api/tasks/{id}/delegate: the collaborator (email or `usr` id) to hand the task to. */
export const DelegateTaskBody = Schema.Struct({
  assignedTo: requiredKey(Schema.String),
  reason: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "DelegateTaskBody" })
export type DelegateTaskBody = typeof DelegateTaskBody.Type

/** The actions of bulk triage. */
export const BulkActions = ["accept", "reject", "done"] as const
export const bulkMaxTasks = 100

/** POST /api/tasks/bulk: `accept` needs a project, the first of `projectIds`. */
export const BulkTriageBody = inputSchema(
  "BulkBody",
  Schema.Struct({
    taskIds: requiredKey(Schema.Array(Schema.String).check(Schema.isMaxLength(bulkMaxTasks))),
    action: requiredKey(Enumerated(BulkActions)),
    projectIds: Schema.optionalKey(Schema.Array(Schema.String)),
    reason: Schema.optionalKey(Schema.String)
  })

    .annotate({ identifier: "BulkBody" })
    .check(
      Schema.makeFilter((body) =>
        body.action !== "accept" || (body.projectIds ?? []).length > 0
          ? undefined
          : { path: ["projectIds"], issue: "Required for accept: at least one project id" }
      )
    )
)
export type BulkTriageBody = Loose<typeof BulkTriageBody.Encoded>
