import type { Fields } from "./RecordStore.ts"
import type { Person, TaskRecord } from "./Task.ts"
import type { Status } from "./Values.ts"

/** Triage notes keep every note: a new one goes on a line of its own after the others. */
export const appendNote = (notes: string, line: string): string => (notes.length === 0 ? line : `${notes}\n${line}`)

const day = (nowIso: string) => nowIso.slice(0, 10)
const who = (person: Person) => `${person.name} <${person.email}>`

export const defaultBulkRejectReason = "Rejected in bulk triage"

/**
 * The triage moves of the task inbox contract, "States and transitions", as the fields each one changes. Every move
 * applies to a task in any state; the use case checks who may make it.
 */
export const Triage = {
  /** Accepted and linked to the project; status from the body, default Ready to Start. */
  accept: (projectId: string, status: Status | undefined): Fields => ({
    triageStatus: "Accepted",
    status: status ?? "Ready to Start",
    project: [projectId]
  }),

  /** Rejected; the reason is stored in the triage notes. */
  reject: (task: TaskRecord, by: Person, reason: string, nowIso: string): Fields => ({
    triageStatus: "Rejected",
    triageNotes: appendNote(task.triageNotes, `Rejected by ${who(by)} on ${day(nowIso)}: ${reason}`)
  }),

  /** More information requested; the note is stored in the triage notes. */
  needsInfo: (task: TaskRecord, by: Person, note: string, nowIso: string): Fields => ({
    triageStatus: "Needs More Info",
    triageNotes: appendNote(task.triageNotes, `More information requested by ${who(by)} on ${day(nowIso)}: ${note}`)
  }),

  /** Archived: in no list any more, still in the record store. */
  archive: (): Fields => ({ isArchived: true }),

  /** Reassigned; the hand-off is recorded in the triage notes. */
  delegate: (task: TaskRecord, from: Person, to: Person, reason: string | undefined, nowIso: string): Fields => ({
    assignedTo: [to.id],
    triageNotes: appendNote(
      task.triageNotes,
      `Delegated by ${who(from)} to ${who(to)} on ${day(nowIso)}` +
        (reason === undefined || reason.length === 0 ? "" : `: ${reason}`)
    )
  }),

  /** Bulk `done`. */
  done: (): Fields => ({ status: "Done" })
}
