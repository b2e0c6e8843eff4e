import type { Block } from "../../kernel/PageDocument.ts"
import type { Decision } from "../Decision.ts"
import type { EscalationStepState } from "../EscalationSchema.ts"
import { timeLabel } from "./Labels.ts"

const what = (step: EscalationStepState): string => {
  switch (step.action) {
    case "remind":
      return "Remind the deciders"
    case "notify_admins":
      return "Tell the organization's admins"
    case "route":
      return `Route to ${[step.toRole, step.toEmail].filter((t) => t !== undefined).join(" and ")}`
  }
}

const when = (step: EscalationStepState): string =>
  step.ranAt === undefined
    ? `Due ${timeLabel(step.dueAt)}`
    : `${step.outcome === "skipped" ? "Skipped (the role is gone)" : "Done"} ${timeLabel(step.ranAt)}`

/** A decision's escalation ladder on its page: each step, when it is due, and when it ran. */
export const escalationBlocks = (decision: Decision): Array<Block> =>
  decision.escalation === undefined || decision.escalation.length === 0
    ? []
    : [
        { type: "heading", text: "Escalation", level: 2 },
        { type: "list", items: decision.escalation.map((step) => ({ title: what(step), subtitle: when(step) })) }
      ]
