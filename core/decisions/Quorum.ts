import { Schema } from "effect"
import { normalizeEmail } from "../kernel/Email.ts"
import { ValidationError } from "../kernel/Errors.ts"
import { bodyIssue } from "../kernel/FieldIssue.ts"

/**
 * Decisions that need more than one person: a quorum of M. While a decision with a quorum is open, a
 * decider's choice or decline is a vote, not the answer. Each person has at most one vote, which they may
 * change until the decision resolves; it resolves when one option (or Decline) has M votes from distinct
 * people. Pure: the decision machine (DecisionMachine.ts) applies `castVote` to a Choose or Decline.
 */

/** The largest quorum a decision may ask for. */
export const quorumCountMax = 100

export const QuorumCount = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: quorumCountMax })).annotate({
  description: `How many distinct people must give the same answer, 1 to ${quorumCountMax}`
})

/** What a caller (or a template) asks for. */
export const QuorumCreate = Schema.Struct({ count: QuorumCount }).annotate({
  identifier: "QuorumCreate",
  description:
    "The decision resolves when one option, or Decline, has `count` votes from distinct people; until then a " +
    "choice or decline by a decider is their vote, which they may change. At most the number of people who " +
    "may answer the decision when it is created."
})
export type QuorumCreate = typeof QuorumCreate.Type

export const VoteKind = Schema.Literals(["chosen", "declined"])

/** One person's vote: for an option (`chosen`) or to decline. */
export const Vote = Schema.Struct({
  by: Schema.String.annotate({ description: "The voter's email" }),
  kind: VoteKind.annotate({ description: "chosen: a vote for `optionId`; declined: a vote to decline" }),
  optionId: Schema.optionalKey(Schema.String),
  rationale: Schema.optionalKey(Schema.String),
  at: Schema.String.annotate({ description: "When the person last voted" })
}).annotate({ identifier: "Vote", description: "One person's current vote on a decision with a quorum" })
export type Vote = typeof Vote.Type

/** A decision's quorum as stored: the count asked for and the current votes, one per person, oldest first. */
export const QuorumState = Schema.Struct({
  count: Schema.Int,
  votes: Schema.Array(Vote)
}).annotate({ identifier: "Quorum" })
export type QuorumState = typeof QuorumState.Type

/** The votes per option (every option of the decision, zero included) and for Decline. */
export const Tally = Schema.Struct({
  options: Schema.Record(Schema.String, Schema.Int).annotate({ description: "Votes per option id, 0 included" }),
  declined: Schema.Int.annotate({ description: "Votes to decline" })
}).annotate({ identifier: "QuorumTally" })
export type Tally = typeof Tally.Type

/** The quorum as answers show it: the stored state and its tally. */
export const QuorumView = Schema.Struct({
  count: Schema.Int.annotate({ description: "How many matching votes from distinct people resolve the decision" }),
  votes: Schema.Array(Vote).annotate({ description: "The current votes, one per person, in the order last cast" }),
  tally: Tally
}).annotate({
  identifier: "QuorumView",
  description: "A decision's quorum: the count it needs, who has voted for what, and the tally"
})
export type QuorumView = typeof QuorumView.Type

/** What a vote is for: an option, or Decline. Two votes count together when their ballots are equal. */
export type Ballot = { readonly kind: "chosen"; readonly optionId: string } | { readonly kind: "declined" }

const sameBallot = (vote: Vote, ballot: Ballot): boolean =>
  vote.kind === ballot.kind && (ballot.kind === "declined" || vote.optionId === ballot.optionId)

const sameVoter = (a: string, b: string): boolean => normalizeEmail(a) === normalizeEmail(b)

export const newQuorum = (input: QuorumCreate): QuorumState => ({ count: input.count, votes: [] })

/** The outcome a vote completed: the ballot that reached the count, and the votes that make it. */
export interface Outcome {
  readonly ballot: Ballot
  readonly votes: ReadonlyArray<Vote>
}

export interface Cast {
  readonly quorum: QuorumState
  /** Present when this vote gave its ballot the count: the decision resolves. */
  readonly outcome?: Outcome | undefined
}

/**
 * Records `by`'s vote for `ballot` at `at`, replacing any earlier vote of theirs (so a person's votes are one),
 * and answers whether that ballot now has the count. Only the ballot voted for can reach it: every other
 * ballot keeps or loses votes.
 */
export const castVote = (
  quorum: QuorumState,
  by: string,
  ballot: Ballot,
  at: string,
  rationale?: string | undefined
): Cast => {
  const vote: Vote = {
    by,
    kind: ballot.kind,
    ...(ballot.kind === "chosen" ? { optionId: ballot.optionId } : {}),
    ...(rationale === undefined ? {} : { rationale }),
    at
  }
  const votes = [...quorum.votes.filter((v) => !sameVoter(v.by, by)), vote]
  const next: QuorumState = { ...quorum, votes }
  const forBallot = votes.filter((v) => sameBallot(v, ballot))
  return forBallot.length >= quorum.count ? { quorum: next, outcome: { ballot, votes: forBallot } } : { quorum: next }
}

/** Counts the votes for each of `optionIds` and for Decline. */
export const tally = (quorum: QuorumState, optionIds: ReadonlyArray<string>): Tally => {
  const options: Record<string, number> = {}
  for (const id of optionIds) options[id] = 0
  let declined = 0
  for (const vote of quorum.votes) {
    if (vote.kind === "declined") declined++
    else if (vote.optionId !== undefined && vote.optionId in options) options[vote.optionId]!++
  }
  return { options, declined }
}

export const quorumView = (quorum: QuorumState, optionIds: ReadonlyArray<string>): QuorumView => ({
  count: quorum.count,
  votes: quorum.votes,
  tally: tally(quorum, optionIds)
})

/**
 * The people who may answer a decision when it is created: the role's holders and its direct assignee,
 * each once. A quorum above their number could never be reached.
 */
export const possibleVoters = (holders: ReadonlyArray<string>, directAssigneeEmail: string | undefined): number =>
  new Set([...holders, ...(directAssigneeEmail === undefined ? [] : [directAssigneeEmail])].map(normalizeEmail)).size

/** A quorum no vote could reach: more than the people who may answer the decision now. Undefined when fine. */
export const quorumProblem = (
  quorum: QuorumCreate | undefined,
  holders: ReadonlyArray<string>,
  directAssigneeEmail: string | undefined
): ValidationError | undefined => {
  if (quorum === undefined) return undefined
  const voters = possibleVoters(holders, directAssigneeEmail)
  if (quorum.count <= voters) return undefined
  return new ValidationError({
    message: `The quorum asks for ${quorum.count} votes, but only ${voters} ${voters === 1 ? "person" : "people"} may answer this decision.`,
    details: [bodyIssue("quorum.count", `must be at most ${voters}, the holders of the role and the direct assignee`)]
  })
}

/**
 * How often a move is tried when other moves keep changing the decision first. Votes of many people on one
 * decision are expected to race: each lost race means another vote (or move) was stored, and at most `count`
 * votes are stored before the decision resolves and refuses the rest, so the bound grows with the count.
 */
export const moveAttempts = (base: number, quorum: QuorumState | undefined): number =>
  quorum === undefined ? base : base + 2 * quorum.count
