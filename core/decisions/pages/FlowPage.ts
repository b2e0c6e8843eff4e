import type { Block, ChartBlock, PageDocument } from "../../kernel/PageDocument.ts"
import { flowDays, type Flow } from "../DecisionFlow.ts"
import { decisionHref, pageHref } from "./Addresses.ts"
import { statusLabel, timeLabel } from "./Labels.ts"

/**
 * The flow page (org admins): `flow` shows the last 30 days, `flow-<days>` another window (1 to 365). Its
 * charts carry their numbers, which the workspace shows as tables too.
 */

const flowPrefix = "flow"
/** The windows the page offers links to. */
const windowsOffered = [7, 30, 90] as const

export const flowPageId = (days: number): string => (days === flowDays.default ? flowPrefix : `${flowPrefix}-${days}`)

/** The window's days of a flow page id, or undefined when the id is not one (`flow-030` is not: one spelling). */
export const parseFlowPageId = (id: string): number | undefined => {
  if (id === flowPrefix) return flowDays.default
  const match = /^flow-([1-9][0-9]{0,2})$/.exec(id)
  if (match === null) return undefined
  const days = Number(match[1])
  return days >= flowDays.min && days <= flowDays.max && days !== flowDays.default ? days : undefined
}

interface TimeUnit {
  readonly name: string
  readonly seconds: number
}
const units: ReadonlyArray<TimeUnit> = [
  { name: "seconds", seconds: 1 },
  { name: "minutes", seconds: 60 },
  { name: "hours", seconds: 3600 },
  { name: "days", seconds: 86_400 }
]

/** The largest unit in which the longest time is still at least 2 of it (seconds for short times). */
const unitFor = (longestSeconds: number): TimeUnit =>
  [...units].reverse().find((unit) => longestSeconds >= 2 * unit.seconds) ?? units[0]!

/** A number as the charts carry it: to three decimals. */
const inUnit = (seconds: number, unit: TimeUnit): number => Math.round((seconds / unit.seconds) * 1000) / 1000

/** A wait as people read it: `3 d 4 h`, `2 h 5 min`, `40 s`. */
export const waitLabel = (seconds: number): string => {
  const d = Math.floor(seconds / 86_400)
  const h = Math.floor((seconds % 86_400) / 3600)
  const m = Math.floor((seconds % 3600) / 60)
  if (d > 0) return `${d} d ${h} h`
  if (h > 0) return `${h} h ${m} min`
  if (m > 0) return `${m} min`
  return `${seconds} s`
}

const timesChart = (
  title: string,
  xLabel: string,
  rows: ReadonlyArray<{ readonly key: string; readonly medianSeconds: number; readonly p90Seconds: number }>
): Block => {
  if (rows.length === 0) return { type: "text", text: `${title}: nothing was decided in this window.` }
  const unit = unitFor(Math.max(...rows.map((row) => row.p90Seconds)))
  return {
    type: "chart",
    kind: "bar",
    title,
    xLabel,
    unit: unit.name,
    labels: rows.map((row) => row.key),
    series: [
      { label: "Median", values: rows.map((row) => inUnit(row.medianSeconds, unit)) },
      { label: "90th percentile", values: rows.map((row) => inUnit(row.p90Seconds, unit)) }
    ]
  } satisfies ChartBlock
}

const sum = (values: ReadonlyArray<number>): number => values.reduce((total, value) => total + value, 0)

/** The flow of the organization's decisions over the window, as a page. */
export const flowPage = (flow: Flow): PageDocument => {
  const days = flow.perDay
  const perDay: ChartBlock = {
    type: "chart",
    kind: "line",
    title: "Decisions per day",
    xLabel: "Day (UTC)",
    unit: "decisions",
    labels: days.map((day) => day.day),
    series: [
      { label: "Created", values: days.map((day) => day.created) },
      { label: "Resolved", values: days.map((day) => day.resolved) },
      { label: "Expired", values: days.map((day) => day.expired) },
      { label: "Escalated", values: days.map((day) => day.escalated) }
    ]
  }
  return {
    id: flowPageId(flow.window.days),
    title: "Flow",
    description: `The last ${flow.window.days === 1 ? "day" : `${flow.window.days} days`}, ${flow.window.from} to ${flow.window.to} (UTC), as of ${timeLabel(flow.window.asOf)}.`,
    blocks: [
      {
        type: "list",
        items: windowsOffered.map((offered) => ({
          title: `Last ${offered} days`,
          href: pageHref(flowPageId(offered)),
          ...(offered === flow.window.days ? { badge: "Shown" } : {})
        }))
      },
      {
        type: "statGroup",
        stats: [
          { label: "Created", value: String(sum(days.map((day) => day.created))) },
          { label: "Resolved", value: String(sum(days.map((day) => day.resolved))) },
          { label: "Expired", value: String(sum(days.map((day) => day.expired))) },
          { label: "Escalated", value: String(sum(days.map((day) => day.escalated))) }
        ]
      },
      perDay,
      timesChart(
        "Time to decide by role",
        "Role",
        flow.timeToDecide.byRole.map((row) => ({ key: row.roleSlug, ...row }))
      ),
      timesChart(
        "Time to decide by template",
        "Template",
        flow.timeToDecide.byTemplate.map((row) => ({ key: row.templateSlug, ...row }))
      ),
      { type: "heading", text: "Waiting longest", level: 2 },
      flow.oldestWaiting.length === 0
        ? { type: "callout", tone: "success", text: "Nothing is waiting." }
        : {
            type: "table",
            columns: [
              { key: "title", label: "Decision" },
              { key: "role", label: "Role" },
              { key: "status", label: "Status" },
              { key: "waiting", label: "Waiting" }
            ],
            rows: flow.oldestWaiting.map((waiting) => ({
              title: waiting.title,
              role: waiting.roleSlug,
              status: statusLabel(waiting.status),
              waiting: waitLabel(waiting.waitingSeconds),
              href: decisionHref(waiting.id)
            }))
          }
    ]
  }
}
