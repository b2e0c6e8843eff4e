import type { Block } from "../../kernel/PageDocument.ts"
import { isOpen, type Decision } from "../Decision.ts"
import { tally, type Vote } from "../Quorum.ts"
import { timeLabel } from "./Labels.ts"

const ballotLabel = (decision: Decision, vote: Vote): string =>
  vote.kind === "declined"
    ? "Decline"
    : (decision.options.find((o) => o.id === vote.optionId)?.label ?? vote.optionId ?? "an option")

/**
 * A decision with a quorum: how many votes it needs, the tally per option and for Decline, and who has voted
 * for what (and when). While it is open, a decider's answer is their vote, which they may change.
 */
export const quorumBlocks = (decision: Decision): Array<Block> => {
  const quorum = decision.quorum
  if (quorum === undefined) return []
  const counts = tally(
    quorum,
    decision.options.map((o) => o.id)
  )
  const open = isOpen(decision.status)
  return [
    { type: "heading", text: "Votes", level: 2 },
    {
      type: "callout",
      tone: "info",
      text: open
        ? `This decision needs ${quorum.count} matching ${quorum.count === 1 ? "vote" : "votes"} from different people. ` +
          "Choosing or declining casts your vote; you may change it until the decision is resolved."
        : `This decision needed ${quorum.count} matching ${quorum.count === 1 ? "vote" : "votes"} from different people.`
    },
    {
      type: "table",
      columns: [
        { key: "answer", label: "Answer" },
        { key: "votes", label: "Votes" }
      ],
      rows: [
        ...decision.options.map((o) => ({ answer: o.label, votes: `${counts.options[o.id] ?? 0} of ${quorum.count}` })),
        { answer: "Decline", votes: `${counts.declined} of ${quorum.count}` }
      ]
    },
    quorum.votes.length === 0
      ? { type: "text", format: "plain", text: "Nobody has voted yet." }
      : {
          type: "list",
          items: quorum.votes.map((vote) => ({
            title: vote.by,
            subtitle: `${timeLabel(vote.at)}${vote.rationale === undefined ? "" : `: ${vote.rationale}`}`,
            badge: ballotLabel(decision, vote)
          }))
        }
  ]
}
