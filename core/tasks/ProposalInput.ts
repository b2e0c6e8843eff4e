import { Schema, SchemaGetter, SchemaTransformation } from "effect"
import { inputSchema, type Loose } from "./InputDecoding.ts"
import { dateOf, descriptionOf, Enumerated, Hours, required, requiredKey, titleOf } from "./TaskFields.ts"
import { mustBeOneOf, Priorities, priorityAliases, Statuses, type Priority } from "./Values.ts"

/**
 * The proposal bodies (docs/tasks.md, "Validation"): a proposed change (`proposedChangesObj`, an `action` and
 * the fields it changes) and what it is about. Members of a change other than its action's are dropped.
 */

/** A text a change needs: absent or not a string is `Required, a string`. */
const requiredText = "Required, a string"
const Text = Schema.String.annotate({ message: requiredText })
const needed = <S extends Schema.Top>(schema: S) => schema.annotateKey({ messageMissingKey: requiredText })
const ChangeDate = dateOf(Text)
/** A date or `null`: not a string is `Required, a string`. */
const DateOrNull = Schema.NullOr(ChangeDate).annotate({ message: requiredText })
/** An estimate or `null`, needed: absent or not a number is `Must be a number`. */
const HoursOrNull = Schema.NullOr(Hours)
  .annotate({ message: "Must be a number" })
  .annotateKey({ messageMissingKey: "Must be a number" })
const ChangeTitle = needed(titleOf(Text))
const ChangeDescription = descriptionOf(Text)
const ChangePriority = Enumerated(Priorities, priorityAliases, Text)

const change = <const A extends string, F extends Schema.Struct.Fields>(action: A, fields: F) =>
  Schema.Struct({ action: Schema.Literal(action), ...fields })

export const ProposalChangeSchema = Schema.Union([
  change("create_task", {
    title: ChangeTitle,
    description: Schema.optionalKey(ChangeDescription),
    priority: Schema.optionalKey(ChangePriority),
    assignedTo: Schema.optionalKey(Text),
    dueDate: Schema.optionalKey(DateOrNull)
  }),
  change("change_status", { status: needed(Enumerated(Statuses, {}, Text)) }),
  change("change_priority", { priority: needed(ChangePriority) }),
  change("reassign", { assignedTo: needed(Text) }),
  change("change_due_date", { dueDate: needed(DateOrNull) }),
  change("change_start_date", { startDate: needed(DateOrNull) }),
  change("change_description", { description: needed(ChangeDescription) }),
  change("change_title", { title: ChangeTitle }),
  change("change_estimate", { hoursEstimated: HoursOrNull }),
  change("archive_task", {})
])

export type ProposalAction = (typeof ProposalChangeSchema.Type)["action"]
export const ProposalActions: ReadonlyArray<ProposalAction> = ProposalChangeSchema.members.map(
  (member) => member.fields.action.literal
)

/**
 * The action comes first: a change that is not an object is `Must be an object with an action`, an unknown
 * action is `Must be one of: <the actions>` on `action`; then the fields of that action.
 */
const ActionGate = Schema.StructWithRest(
  Schema.Struct({
    action: Schema.Literals(ProposalActions as readonly [ProposalAction, ...Array<ProposalAction>])
      .annotate({ message: mustBeOneOf(ProposalActions) })
      .annotateKey({ messageMissingKey: mustBeOneOf(ProposalActions) })
  }),
  [Schema.Record(Schema.String, Schema.Unknown)]
).annotate({
  identifier: "ProposalChange",
  message: "Must be an object with an action",
  description:
    "An action and the fields it changes: create_task (title; optional description, priority, assignedTo, " +
    "dueDate), change_status (status), change_priority (priority), reassign (assignedTo), change_due_date " +
    "(dueDate: a date or null), change_start_date (startDate: a date or null), change_description " +
    "(description), change_title (title), change_estimate (hoursEstimated: a number or null), archive_task. " +
    "Values as in a task's create and patch bodies; other members are dropped."
})

/** `proposedChangesObj`: decoded to its action's fields, canonical (priority aliases become the priority). */
export const ProposalChange = ActionGate.pipe(
  Schema.decodeTo(ProposalChangeSchema, {
    decode: SchemaGetter.passthrough({ strict: false }),
    encode: SchemaGetter.passthrough({ strict: false })
  })
)
export type ProposalChange = typeof ProposalChange.Type

/** POST /api/proposals. */
export const ProposalBody = inputSchema(
  "ProposalBody",
  Schema.Struct({
    taskId: Schema.optionalKey(Schema.String),
    projectId: Schema.optionalKey(Schema.String),
    outcomeId: Schema.optionalKey(Schema.String),
    meetingId: Schema.optionalKey(Schema.String),
    type: requiredKey(
      Schema.String.pipe(Schema.decode(SchemaTransformation.trim())).check(Schema.isMinLength(1, { message: required }))
    ),
    name: Schema.optionalKey(Schema.String),
    proposedChangesObj: requiredKey(ProposalChange)
  })

    .annotate({ identifier: "ProposalBody" })
    .check(
      Schema.makeFilter((body) =>
        body.taskId === undefined && body.projectId === undefined && body.outcomeId === undefined
          ? { path: ["taskId"], issue: "At least one of taskId, projectId, outcomeId is required" }
          : body.proposedChangesObj.action !== "create_task" && body.taskId === undefined
            ? { path: ["taskId"], issue: `Required for ${body.proposedChangesObj.action}` }
            : undefined
      )
    )
)
/** The proposal body as it arrives; its change is checked by the schema, whatever it is. */
export type ProposalBody = Omit<Loose<typeof ProposalBody.Encoded>, "proposedChangesObj"> & {
  readonly proposedChangesObj: unknown
}

export const ProposalRejectBody = Schema.Struct({ reason: requiredKey(Schema.String) }).annotate({
  identifier: "ProposalRejectBody"
})

type NewTaskChange = Extract<ProposalChange, { readonly action: "create_task" }>

/** A change as stored: a new task's description, priority and due date always given. */
export type StoredChange =
  | Exclude<ProposalChange, NewTaskChange>
  | (NewTaskChange & {
      readonly description: string
      readonly priority: Priority
      readonly dueDate: string | null
    })

/**
 * A change as it is stored: a new task's absent description, priority and due date take their defaults (left
 * to the use case rather than the schema, so a typed client may leave them out).
 */
export const storedForm = (change: ProposalChange): StoredChange =>
  change.action === "create_task"
    ? {
        action: change.action,
        title: change.title,
        description: change.description ?? "",
        priority: change.priority ?? "P2: Medium Priority",
        ...(change.assignedTo === undefined ? {} : { assignedTo: change.assignedTo }),
        dueDate: change.dueDate ?? null
      }
    : change
