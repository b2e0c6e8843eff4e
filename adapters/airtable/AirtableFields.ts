import { AiStatuses } from "../../core/tasks/Proposal.ts"
import type { Table } from "../../core/tasks/RecordStore.ts"
import { Origins, Priorities, Statuses, TriageStatuses } from "../../core/tasks/Values.ts"

/**
 * Where the task inbox keeps its records in an Airtable base: for each table of the record store, the base's
 * table and, for each field the task inbox stores, the base's field and its type. The setup walks this map to
 * create what a base lacks; the record store translates every read, write and query through it.
 */

/** The field types the task inbox uses, as the metadata API names them. */
export type AirtableFieldType =
  | "singleLineText"
  | "multilineText"
  | "email"
  | "url"
  | "singleSelect"
  | "number"
  | "checkbox"
  | "date"
  | "dateTime"
  | "multipleRecordLinks"

/**
 * The options a field is created with. `linkedTable` names the record store's table a link field points
 * at; the setup turns it into the base's `linkedTableId`. The others are the metadata API's own options.
 */
export type AirtableFieldOptions =
  | { readonly choices: ReadonlyArray<{ readonly name: string }> }
  | { readonly precision: number }
  | { readonly icon: "check"; readonly color: "greenBright" }
  | { readonly dateFormat: { readonly name: "iso" } }
  | {
      readonly dateFormat: { readonly name: "iso" }
      readonly timeFormat: { readonly name: "24hour" }
      readonly timeZone: "utc"
    }
  | { readonly linkedTable: Table }

/**
 * What a field the record store keeps itself holds: `recordId` the record's own id as the task inbox knows it
 * (so that a link to the record reads as ids in a formula), `createdAt` when the record was created (the
 * order selections answer in).
 */
export type ManagedField = "recordId" | "createdAt"

export interface AirtableField {
  /** The field's name in the base. */
  readonly name: string
  readonly type: AirtableFieldType
  readonly options?: AirtableFieldOptions | undefined
  /** The field's name in the task inbox's records (core/tasks); absent for a field the store manages. */
  readonly key?: string | undefined
  readonly managed?: ManagedField | undefined
  /** A text field holding a JSON value (an object, a list): written as its JSON text, read back parsed. */
  readonly json?: boolean | undefined
  /**
   * A single select holding a yes or no: `true` is its first choice, `false` its second. For a flag whose default
   * is yes, which a checkbox cannot keep (an unticked box reads as never set).
   */
  readonly yesNo?: boolean | undefined
}

export interface AirtableTable {
  /** The record store's table. */
  readonly table: Table
  /** The table's name in the base. */
  readonly name: string
  /** The first is the table's primary field. */
  readonly fields: ReadonlyArray<AirtableField>
}

/** The choice of a yes-or-no select holding `value`: its first choice for yes, its second for no. */
export const yesNoChoice = (field: AirtableField, value: boolean): string | undefined => {
  const options = field.options
  return options !== undefined && "choices" in options ? options.choices[value ? 0 : 1]?.name : undefined
}

/** The base's table names, by the record store's table (configurable: `AIRTABLE_TABLE_<TABLE>`). */
export type AirtableTableNames = Readonly<Record<Table, string>>

export const defaultTableNames: AirtableTableNames = {
  tasks: "Tasks",
  projects: "Projects",
  clients: "Clients",
  outcomes: "Outcomes",
  meetings: "Meetings",
  proposals: "Proposals",
  collaborators: "Collaborators",
  settings: "Settings"
}

const text = (key: string, name: string): AirtableField => ({ key, name, type: "singleLineText" })
const longText = (key: string, name: string): AirtableField => ({ key, name, type: "multilineText" })
const url = (key: string, name: string): AirtableField => ({ key, name, type: "url" })
const select = (key: string, name: string, choices: ReadonlyArray<string>): AirtableField => ({
  key,
  name,
  type: "singleSelect",
  options: { choices: choices.map((choice) => ({ name: choice })) }
})
const number = (key: string, name: string, precision: number): AirtableField => ({
  key,
  name,
  type: "number",
  options: { precision }
})
const checkbox = (key: string, name: string): AirtableField => ({
  key,
  name,
  type: "checkbox",
  options: { icon: "check", color: "greenBright" }
})
const date = (key: string, name: string): AirtableField => ({
  key,
  name,
  type: "date",
  options: { dateFormat: { name: "iso" } }
})
const dateTimeOptions = {
  dateFormat: { name: "iso" },
  timeFormat: { name: "24hour" },
  timeZone: "utc"
} as const
const dateTime = (key: string, name: string): AirtableField => ({
  key,
  name,
  type: "dateTime",
  options: dateTimeOptions
})
const link = (key: string, name: string, linkedTable: Table): AirtableField => ({
  key,
  name,
  type: "multipleRecordLinks",
  options: { linkedTable }
})
/** The primary field of a table other records link to and select by: the record's own id. */
const recordId = (name: string): AirtableField => ({ name, type: "singleLineText", managed: "recordId" })
const createdAt: AirtableField = {
  name: "Created At",
  type: "dateTime",
  options: dateTimeOptions,
  managed: "createdAt"
}

/**
 * Every field the task inbox stores, by table (core/tasks: Task.ts, Directory.ts, Proposals.ts, Settings.ts,
 * TaskRecords.ts). People are records of the collaborators table: a link to one is a link field holding that
 * record, which the task inbox knows by its `usr…` id.
 */
const fieldsOf: Readonly<Record<Table, ReadonlyArray<AirtableField>>> = {
  tasks: [
    text("title", "Title"),
    longText("description", "Description"),
    select("status", "Status", Statuses),
    select("priority", "Priority", Priorities),
    select("triageStatus", "Triage Status", TriageStatuses),
    select("origin", "Origin", Origins),
    text("originDetail", "Origin Detail"),
    longText("triageNotes", "Triage Notes"),
    link("assignedTo", "Assigned To", "collaborators"),
    link("requestedBy", "Requested By", "collaborators"),
    text("assignedToAI", "Assigned To AI"),
    link("project", "Project", "projects"),
    date("dueDate", "Due Date"),
    date("startDate", "Start Date"),
    number("hoursEstimated", "Hours Estimated", 2),
    number("hoursUsed", "Hours Used", 2),
    checkbox("isArchived", "Is Archived"),
    text("shortCode", "Short Code"),
    dateTime("completedAt", "Completed At"),
    dateTime("resolvedAt", "Resolved At"),
    link("proposal", "Proposal", "proposals"),
    createdAt
  ],
  projects: [
    recordId("Record ID"),
    text("name", "Name"),
    text("status", "Status"),
    select("priority", "Priority", Priorities),
    date("startDate", "Start Date"),
    date("endDate", "End Date"),
    link("client", "Client", "clients"),
    link("accountManager", "Account Manager", "collaborators"),
    createdAt
  ],
  clients: [recordId("Record ID"), text("name", "Name"), createdAt],
  outcomes: [
    text("name", "Name"),
    text("status", "Status"),
    longText("description", "Description"),
    link("project", "Project", "projects"),
    createdAt
  ],
  meetings: [
    text("name", "Name"),
    dateTime("startTime", "Start Time"),
    number("duration", "Duration", 0),
    text("linkLabel", "Link Label"),
    url("linkUrl", "Link URL"),
    text("recordingType", "Recording Type"),
    url("transcriptUrl", "Transcript URL"),
    link("projects", "Projects", "projects"),
    link("clients", "Clients", "clients"),
    link("attendees", "Attendees", "collaborators"),
    link("createdBy", "Created By", "collaborators"),
    longText("summary", "Summary"),
    longText("keyProgress", "Key Progress"),
    longText("decisionsMade", "Decisions Made"),
    longText("nextActions", "Next Actions"),
    longText("actionable", "Actionable"),
    text("deepMatchStatus", "Deep Match Status"),
    createdAt
  ],
  proposals: [
    recordId("Record ID"),
    text("name", "Name"),
    text("type", "Type"),
    select("aiStatus", "AI Status", AiStatuses),
    // The proposed change, a JSON object, kept as its JSON text.
    { ...longText("proposedChangesObj", "Proposed Changes"), json: true },
    link("task", "Task", "tasks"),
    link("project", "Project", "projects"),
    link("outcome", "Outcome", "outcomes"),
    link("meeting", "Meeting", "meetings"),
    link("owner", "Owner", "collaborators"),
    link("author", "Author", "collaborators"),
    longText("rejectionReason", "Rejection Reason"),
    dateTime("resolvedAt", "Resolved At"),
    createdAt
  ],
  collaborators: [recordId("User ID"), { key: "email", name: "Email", type: "email" }, text("name", "Name"), createdAt],
  settings: [
    recordId("Record ID"),
    link("user", "User", "collaborators"),
    // Shown unless set to No: a checkbox would read an unticked box as never set, that is as shown.
    { ...select("showSentNav", "Show Sent Nav", ["Yes", "No"]), yesNo: true },
    text("notificationChannel", "Notification Channel"),
    text("notificationFrequency", "Notification Frequency"),
    createdAt
  ]
}

/**
 * The field map for a base whose tables carry these names. Link fields point both ways between tasks and
 * proposals, so a setup makes every table with its other fields first, then the link fields.
 */
export const airtableTables = (names: AirtableTableNames = defaultTableNames): ReadonlyArray<AirtableTable> =>
  (Object.keys(fieldsOf) as Array<Table>).map((table) => ({ table, name: names[table], fields: fieldsOf[table] }))

/** The field map of a base with the default table names. */
export const AirtableFields: ReadonlyArray<AirtableTable> = airtableTables()
