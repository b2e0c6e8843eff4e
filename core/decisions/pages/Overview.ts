import type { Stat } from "../../kernel/PageDocument.ts"
import type { Decision } from "../Decision.ts"
import { decisionHref, pageHref } from "./Addresses.ts"

/**
 * The uniform plane's summary, activity and search answers for one person (their shapes are ours: each is
 * ready to show, with workspace-relative links).
 */

/** Counts are read up to this many; more shows as "100+". */
export const countCap = 100

const count = (n: number): string => (n >= countCap ? `${countCap}+` : String(n))

export interface Summary {
  readonly stats: ReadonlyArray<Stat>
  readonly href: string
}

export const summaryOf = (input: {
  readonly openInInbox: ReadonlyArray<Decision>
  readonly unrouted: number
}): Summary => ({
  stats: [
    { label: "Waiting for you", value: count(input.openInInbox.length) },
    { label: "Urgent", value: count(input.openInInbox.filter((d) => d.urgency === "urgent").length) },
    { label: "Unrouted", value: count(input.unrouted) }
  ],
  href: pageHref("inbox")
})

export interface ActivityItem {
  readonly id: string
  readonly title: string
  readonly status: Decision["status"]
  readonly updatedAt: string
  readonly href: string
}

/** The person's inbox decisions, most recently changed first. */
export const activityOf = (decisions: ReadonlyArray<Decision>, limit: number): ReadonlyArray<ActivityItem> =>
  [...decisions]
    .sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : a.id < b.id ? 1 : -1))
    .slice(0, limit)
    .map((d) => ({ id: d.id, title: d.title, status: d.status, updatedAt: d.updatedAt, href: decisionHref(d.id) }))

export interface SearchHit {
  readonly id: string
  readonly title: string
  readonly status: Decision["status"]
  readonly score: number
  readonly href: string
}

/**
 * Scores a decision against a query, case-insensitively: the title holding the whole query counts most
 * (more at its start), then every query word found in the title, body, facts or role. Zero is no match.
 */
export const scoreOf = (decision: Decision, query: string): number => {
  const q = query.trim().toLowerCase()
  if (q === "") return 0
  const title = decision.title.toLowerCase()
  const rest = [decision.body ?? "", decision.roleSlug, ...decision.facts.flatMap((f) => [f.label, f.value])]
    .join("\n")
    .toLowerCase()
  let score = 0
  if (title.includes(q)) score += title.startsWith(q) ? 1 : 0.8
  const words = q.split(/\s+/).filter((w) => w.length > 0)
  const found = words.filter((w) => title.includes(w) || rest.includes(w)).length
  if (found === words.length) score += 0.5 * (found / Math.max(words.length, 1))
  else if (score === 0) return 0
  return Math.round(Math.min(score, 1) * 1000) / 1000
}

export const searchOf = (decisions: ReadonlyArray<Decision>, query: string, limit: number): ReadonlyArray<SearchHit> =>
  decisions
    .map((d) => ({ d, score: scoreOf(d, query) }))
    .filter(({ score }) => score > 0)
    .sort((a, b) => b.score - a.score || (a.d.id < b.d.id ? 1 : -1))
    .slice(0, limit)
    .map(({ d, score }) => ({ id: d.id, title: d.title, status: d.status, score, href: decisionHref(d.id) }))
