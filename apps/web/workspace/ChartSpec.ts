import type { Block } from "./types.ts"

/**
 * A page's chart block as the renderer draws it (core/kernel/ChartBlock.ts), read field by field: a block
 * that is not a well-formed chart is skipped, like any block missing what it needs.
 */
export interface ChartSpec {
  readonly kind: "line" | "bar"
  readonly title: string
  readonly xLabel: string
  readonly unit: string | undefined
  readonly labels: ReadonlyArray<string>
  readonly series: ReadonlyArray<{ readonly label: string; readonly values: ReadonlyArray<number> }>
}

const maxLabels = 400
const maxSeries = 6

const isText = (value: unknown): value is string => typeof value === "string" && value.length <= 200

export const chartSpecOf = (block: Block): ChartSpec | undefined => {
  const { kind, title, xLabel, unit, labels, series } = block
  if (kind !== "line" && kind !== "bar") return undefined
  if (!isText(title) || !isText(xLabel) || (unit !== undefined && !isText(unit))) return undefined
  if (!Array.isArray(labels) || labels.length > maxLabels || !labels.every(isText)) return undefined
  if (!Array.isArray(series) || series.length === 0 || series.length > maxSeries) return undefined
  const read = series.map((item: unknown) => {
    if (typeof item !== "object" || item === null) return undefined
    const { label, values } = item as Record<string, unknown>
    if (!isText(label) || !Array.isArray(values) || values.length !== labels.length) return undefined
    if (!values.every((value) => typeof value === "number" && Number.isFinite(value))) return undefined
    return { label, values: values as ReadonlyArray<number> }
  })
  if (read.some((item) => item === undefined)) return undefined
  return {
    kind,
    title,
    xLabel,
    unit,
    labels: labels as ReadonlyArray<string>,
    series: read as ReadonlyArray<{ readonly label: string; readonly values: ReadonlyArray<number> }>
  }
}

/** A day label (`2030-01-05`) as an axis shows it (`01-05`); any other label as it is. */
export const axisLabel = (label: string): string => (/^\d{4}-\d{2}-\d{2}$/.test(label) ? label.slice(5) : label)

/** A number as the table shows it: integers as they are, others to three decimals at most. */
export const numberLabel = (value: number): string =>
  Number.isInteger(value) ? String(value) : String(Math.round(value * 1000) / 1000)
