import { Schema } from "effect"

/**
 * A chart of a page document (core/kernel/PageDocument.ts): named categories along the x axis (days, roles)
 * and up to six series of numbers over them. The workspace draws it and shows the same numbers as a table,
 * so nothing of it is only in the picture.
 */
export interface ChartSeries {
  readonly label: string
  readonly values: ReadonlyArray<number>
}
export interface ChartBlock {
  readonly type: "chart"
  /** Lines (a quantity over time) or bars (a quantity per category, the series side by side). */
  readonly kind: "line" | "bar"
  readonly title: string
  /** What the categories are: the heading of the table's first column ("Day", "Role"). */
  readonly xLabel: string
  /** What the numbers count or measure ("decisions", "hours"). */
  readonly unit?: string
  readonly labels: ReadonlyArray<string>
  /** Each series has one value per label. */
  readonly series: ReadonlyArray<ChartSeries>
}

export const chartLimits = { labels: 400, series: 6, text: 200 } as const

const Short = Schema.String.check(Schema.isMaxLength(chartLimits.text))

export const ChartBlockSchema = Schema.Struct({
  type: Schema.Literal("chart"),
  kind: Schema.Literals(["line", "bar"]),
  title: Short,
  xLabel: Short,
  unit: Schema.optionalKey(Short),
  labels: Schema.Array(Short).check(Schema.isMaxLength(chartLimits.labels)),
  series: Schema.Array(
    Schema.Struct({ label: Short, values: Schema.Array(Schema.Finite).check(Schema.isMaxLength(chartLimits.labels)) })
  ).check(Schema.isMinLength(1), Schema.isMaxLength(chartLimits.series))
}).check(
  Schema.makeFilter((chart) =>
    chart.series.every((s) => s.values.length === chart.labels.length) ? true : "every series needs one value per label"
  )
)
