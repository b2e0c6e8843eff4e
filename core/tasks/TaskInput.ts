import { Schema } from "effect"
import { inputSchema, type Loose } from "./InputDecoding.ts"
import {
  ClearedTo,
  DateText,
  Description,
  Hours,
  NotClearable,
  OriginValue,
  PriorityValue,
  requiredKey,
  StatusValue,
  Title,
  TriageStatusValue
} from "./TaskFields.ts"

/**
 * The bodies that make and change a task, as Schemas the HTTP contract declares and the use cases take
 * (docs/tasks.md, "Validation"). A use case takes what this schema decoded as it is, and decodes anything
 * else with it: the values it works with are always these, canonical.
 */

/** POST /api/tasks. People and the project are resolved by the use case; absent values take `createDefaults`. */
export const CreateTaskBody = inputSchema(
  "CreateTaskBody",
  Schema.Struct({
    title: requiredKey(Title),
    description: Schema.optionalKey(Description),
    origin: Schema.optionalKey(OriginValue),
    originDetail: Schema.optionalKey(Schema.String),
    assignedTo: Schema.optionalKey(Schema.String),
    requestedBy: Schema.optionalKey(Schema.String),
    priority: Schema.optionalKey(PriorityValue),
    project: Schema.optionalKey(Schema.String)
  })
)
/** The create body as it arrives. */
export type CreateTaskBody = Loose<typeof CreateTaskBody.Encoded>

/**
 * What a new task has where its body says nothing. Applied by the use case rather than by the schema, so a
 * typed client (whose payload is the decoded shape) may leave these out.
 */
export const createDefaults = {
  description: "",
  origin: "Human",
  originDetail: "",
  priority: "P2: Medium Priority"
} as const

/** PATCH /api/tasks/{id}: only the fields to change; `null` clears a clearable field, and is refused on others. */
export const PatchTaskBody = inputSchema(
  "PatchTaskBody",
  Schema.Struct({
    title: Schema.optionalKey(NotClearable(Title)),
    description: Schema.optionalKey(ClearedTo(Description, "")),
    priority: Schema.optionalKey(NotClearable(PriorityValue)),
    status: Schema.optionalKey(NotClearable(StatusValue)),
    triageStatus: Schema.optionalKey(NotClearable(TriageStatusValue)),
    triageNotes: Schema.optionalKey(ClearedTo(Schema.String, "")),
    dueDate: Schema.optionalKey(Schema.NullOr(DateText)),
    startDate: Schema.optionalKey(Schema.NullOr(DateText)),
    hoursEstimated: Schema.optionalKey(Schema.NullOr(Hours)),
    assignedTo: Schema.optionalKey(NotClearable(Schema.String)),
    project: Schema.optionalKey(Schema.NullOr(Schema.String)),
    originDetail: Schema.optionalKey(ClearedTo(Schema.String, ""))
  })
)
export type PatchTaskBody = Loose<typeof PatchTaskBody.Encoded>
