/** Answers always carry the canonical values. */
export const Statuses = ["Ready to Start", "In Progress", "Done", "Cancelled", "Someday/Maybe"] as const
export type Status = (typeof Statuses)[number]

export const Priorities = [
  "P0: Urgent & Critical",
  "P1: Top Priority",
  "P2: Medium Priority",
  "P3: Low Priority",
  "P4: Lowest Priority"
] as const
export type Priority = (typeof Priorities)[number]

export const TriageStatuses = ["New", "Accepted", "Rejected", "Needs More Info"] as const
export type TriageStatus = (typeof TriageStatuses)[number]

export const Origins = ["Human", "AI Agent", "Automation"] as const
export type Origin = (typeof Origins)[number]

/** Priority aliases, input only, case-insensitive. */
export const priorityAliases: Readonly<Record<string, Priority>> = {
  p0: "P0: Urgent & Critical",
  urgent: "P0: Urgent & Critical",
  critical: "P0: Urgent & Critical",
  p1: "P1: Top Priority",
  high: "P1: Top Priority",
  top: "P1: Top Priority",
  p2: "P2: Medium Priority",
  normal: "P2: Medium Priority",
  medium: "P2: Medium Priority",
  p3: "P3: Low Priority",
  low: "P3: Low Priority",
  p4: "P4: Lowest Priority",
  lowest: "P4: Lowest Priority"
}

/**
 * `Must be one of: ...`, the message the task inbox contract gives for an unknown value. The schemas of the
 * enumerated fields (core/tasks/TaskFields.ts) decode any case variant or alias to the canonical value.
 */
export const mustBeOneOf = (values: ReadonlyArray<string>): string => `Must be one of: ${values.join(", ")}`

/** The canonical value `input` names (any case, spaces around, or an alias), or undefined. */
export const canonicalValue =
  <A extends string>(values: ReadonlyArray<A>, aliases: Readonly<Record<string, A>> = {}) =>
  (input: string): A | undefined => {
    const key = input.trim().toLowerCase()
    // Own keys only: `aliases["constructor"]` must not find Object.prototype's.
    return (
      values.find((value) => value.toLowerCase() === key) ?? (Object.hasOwn(aliases, key) ? aliases[key] : undefined)
    )
  }

export const priorityAliasNames: ReadonlyArray<string> = Object.keys(priorityAliases)
