import { Clock, Context, Effect, Layer, Schema } from "effect"
import type { Forbidden } from "../kernel/Errors.ts"
import { epochMs, isoAt } from "../kernel/Timestamp.ts"
import { requireAdmin, type WorkspaceUser } from "./DecisionAdmin.ts"
import { FlowStatsStore, type DecideTime, type FlowDayCount } from "./FlowStats.ts"
import { utcDay } from "./FlowRules.ts"

const dayMs = 86_400_000

/** The window's length in days when none is asked for, and the bounds of what may be asked. */
export const flowDays = { default: 30, min: 1, max: 365 } as const
/** How many of the oldest waiting decisions the flow lists. */
export const oldestShown = 10

const DayCount = Schema.Struct({
  day: Schema.String.annotate({ description: "A UTC day, YYYY-MM-DD" }),
  created: Schema.Int,
  resolved: Schema.Int,
  expired: Schema.Int,
  escalated: Schema.Int
})
const Times = {
  decided: Schema.Int.annotate({ description: "Decisions resolved by a person in the window" }),
  medianSeconds: Schema.Number,
  p90Seconds: Schema.Number
}

/** The flow of an organization's decisions over the last `window.days` UTC days, today included. */
export const Flow = Schema.Struct({
  window: Schema.Struct({
    days: Schema.Int,
    from: Schema.String.annotate({ description: "The first day of the window (UTC), YYYY-MM-DD" }),
    to: Schema.String.annotate({ description: "The last day of the window (UTC, today), YYYY-MM-DD" }),
    asOf: Schema.String.annotate({ description: "When the flow was read (ISO 8601)" })
  }),
  perDay: Schema.Array(DayCount).annotate({ description: "Every day of the window, oldest first" }),
  timeToDecide: Schema.Struct({
    byRole: Schema.Array(Schema.Struct({ roleSlug: Schema.String, ...Times })),
    byTemplate: Schema.Array(Schema.Struct({ templateSlug: Schema.String, ...Times }))
  }),
  oldestWaiting: Schema.Array(
    Schema.Struct({
      id: Schema.String,
      title: Schema.String,
      roleSlug: Schema.String,
      status: Schema.Literals(["pending", "needs_info"]),
      createdAt: Schema.String,
      waitingSeconds: Schema.Int
    })
  )
}).annotate({ identifier: "DecisionFlow" })
export type Flow = typeof Flow.Type

/** Milliseconds as seconds, to the millisecond. */
const seconds = (ms: number): number => Math.round(ms) / 1000

const times = (time: DecideTime) => ({
  decided: time.decided,
  medianSeconds: seconds(time.medianMs),
  p90Seconds: seconds(time.p90Ms)
})

/** Every day from `fromMs` (a day's start) to `toMs` (exclusive), with the store's counts or zeros. */
const everyDay = (fromMs: number, toMs: number, counted: ReadonlyArray<FlowDayCount>): ReadonlyArray<FlowDayCount> => {
  const byDay = new Map(counted.map((count) => [count.day, count]))
  const days: Array<FlowDayCount> = []
  for (let at = fromMs; at < toMs; at += dayMs) {
    const day = utcDay(at)
    days.push(byDay.get(day) ?? { day, created: 0, resolved: 0, expired: 0, escalated: 0 })
  }
  return days
}

/**
 * The flow at a glance, for org admins: decisions created, resolved, expired and escalated per day over the
 * last `days` UTC days (today included), the median and 90th percentile of the time to decide per role and
 * per template, and the oldest decisions still waiting. Only the admin's organization is ever read.
 */
export class DecisionFlow extends Context.Service<
  DecisionFlow,
  {
    /** `days` from 1 to 365 (checked where it arrives); anyone but an org admin is Forbidden. */
    readonly flow: (user: WorkspaceUser, days?: number) => Effect.Effect<Flow, Forbidden>
  }
>()("core/decisions/DecisionFlow") {
  static readonly layer: Layer.Layer<DecisionFlow, never, FlowStatsStore> = Layer.effect(
    DecisionFlow,
    Effect.gen(function* () {
      const store = yield* FlowStatsStore
      return DecisionFlow.of({
        flow: Effect.fn("DecisionFlow.flow")(function* (user: WorkspaceUser, days: number = flowDays.default) {
          yield* requireAdmin(user)
          const length = Math.min(flowDays.max, Math.max(flowDays.min, Math.trunc(days)))
          const now = yield* Clock.currentTimeMillis
          const to = Math.floor(now / dayMs) * dayMs + dayMs
          const from = to - length * dayMs
          const reading = yield* store.read({
            organizationId: user.organizationId,
            fromIso: isoAt(from),
            toIso: isoAt(to),
            nowIso: isoAt(now),
            oldestLimit: oldestShown
          })
          return {
            window: { days: length, from: utcDay(from), to: utcDay(to - dayMs), asOf: isoAt(now) },
            perDay: everyDay(from, to, reading.days),
            timeToDecide: {
              byRole: reading.byRole.map((time) => ({ roleSlug: time.key, ...times(time) })),
              byTemplate: reading.byTemplate.map((time) => ({ templateSlug: time.key, ...times(time) }))
            },
            oldestWaiting: reading.oldestWaiting.map((waiting) => ({
              ...waiting,
              waitingSeconds: Math.max(0, Math.floor((now - epochMs(waiting.createdAt)) / 1000))
            }))
          }
        })
      })
    })
  )
}
