import uPlot from "uplot"
import { axisLabel, type ChartSpec } from "./ChartSpec.ts"

/**
 * Draws a chart with uPlot on a canvas (loaded only when a page has a chart). Categories sit at 0, 1, 2, ...
 * along x; lines join a series' values, and bars of several series stand over one another, the first
 * series narrowest and in front (a median inside its 90th percentile). Colours are the page's own (read
 * from the legend's swatches), so the chart follows the light or dark theme it is drawn in.
 */

export const chartHeight = 240

export const drawChart = (
  target: HTMLElement,
  spec: ChartSpec,
  style: { readonly colors: ReadonlyArray<string>; readonly text: string; readonly grid: string; readonly font: string }
): uPlot => {
  const count = spec.labels.length
  const xs = spec.labels.map((_, n) => n)
  const top = Math.max(0, ...spec.series.flatMap((s) => s.values))
  const bars = spec.kind === "bar"
  const drawn = spec.series.map((s, n) => ({ ...s, n })).reverse()
  const options: uPlot.Options = {
    width: Math.max(200, target.clientWidth),
    height: chartHeight,
    legend: { show: false },
    cursor: { show: false },
    scales: {
      x: { time: false, range: [-0.5, Math.max(0.5, count - 0.5)] },
      y: { range: [0, top > 0 ? top * 1.1 : 1] }
    },
    axes: [
      {
        stroke: style.text,
        font: style.font,
        grid: { show: false },
        ticks: { stroke: style.grid },
        incrs: [1, 2, 5, 7, 14, 30, 60, 90],
        values: (_, splits) => splits.map((at) => (Number.isInteger(at) ? axisLabel(spec.labels[at] ?? "") : ""))
      },
      {
        stroke: style.text,
        font: style.font,
        grid: { stroke: style.grid, width: 1 },
        ticks: { stroke: style.grid },
        ...(spec.unit === undefined ? {} : { label: spec.unit, labelFont: style.font })
      }
    ],
    series: [
      {},
      ...drawn.map(({ label, n }, order): uPlot.Series => {
        const color = style.colors[n % style.colors.length]!
        // Drawn first, the last series is the widest bar; each later one narrower, in front of it.
        const share = (drawn.length - order) / drawn.length
        return bars
          ? {
              label,
              stroke: color,
              fill: color,
              width: 0,
              points: { show: false },
              paths: uPlot.paths.bars!({ size: [0.8 * share, 72 * share] })
            }
          : { label, stroke: color, width: 2, points: { show: count <= 31, size: 5, fill: color } }
      })
    ]
  }
  return new uPlot(options, [xs, ...drawn.map((s) => [...s.values])], target)
}
