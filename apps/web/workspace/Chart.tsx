import { useEffect, useRef } from "preact/hooks"
import "uplot/dist/uPlot.min.css"
import "./Chart.css"
import { useId } from "../shared/components.tsx"
import { chartSpecOf, numberLabel, type ChartSpec } from "./ChartSpec.ts"
import type { Block } from "./types.ts"

// The drawing code (uPlot) is fetched only when a page shows a chart.
const loadCanvas = () => import("./ChartCanvas.ts")

/** The page's colours for the drawing, read from the legend's swatches and the figure's own text. */
const styleOf = (figure: HTMLElement) => {
  const swatches = [...figure.querySelectorAll<HTMLElement>(".chart-swatch")]
  const figureStyle = getComputedStyle(figure)
  return {
    colors: swatches.map((swatch) => getComputedStyle(swatch).backgroundColor),
    text: figureStyle.color,
    grid: getComputedStyle(document.documentElement).getPropertyValue("--color-border").trim() || figureStyle.color,
    font: `${figureStyle.fontSize} ${figureStyle.fontFamily}`
  }
}

const Drawing = ({ spec, figure }: { readonly spec: ChartSpec; readonly figure: () => HTMLElement | null }) => {
  const box = useRef<HTMLDivElement>(null)
  const key = JSON.stringify(spec)
  useEffect(() => {
    let cancelled = false
    let destroy = () => {}
    void loadCanvas().then(({ drawChart, chartHeight }) => {
      const target = box.current
      const around = figure()
      if (cancelled || target === null || around === null) return
      const plot = drawChart(target, spec, styleOf(around))
      target.dataset["drawn"] = "true"
      const resized = new ResizeObserver(() =>
        plot.setSize({ width: Math.max(200, target.clientWidth), height: chartHeight })
      )
      resized.observe(target)
      destroy = () => {
        resized.disconnect()
        plot.destroy()
      }
    })
    return () => {
      cancelled = true
      destroy()
    }
  }, [key])
  // The drawing repeats the legend and the table below, which assistive technology reads instead.
  return <div class="chart-canvas" ref={box} aria-hidden="true" />
}

/** A chart block: its title, a legend, the drawing, and the same numbers as a table. */
export const Chart = ({ block }: { readonly block: Block }) => {
  const spec = chartSpecOf(block)
  const figure = useRef<HTMLElement>(null)
  const id = useId("chart")
  if (spec === undefined) return null
  const caption = spec.unit === undefined ? spec.title : `${spec.title} (${spec.unit})`
  return (
    <figure class="chart" ref={figure} aria-labelledby={`${id}-caption`}>
      <figcaption id={`${id}-caption`}>{caption}</figcaption>
      <ul class="chart-legend" aria-label="Series">
        {spec.series.map((series, n) => (
          <li key={n}>
            <span class={`chart-swatch chart-swatch-${n}`} aria-hidden="true" />
            {series.label}
          </li>
        ))}
      </ul>
      <Drawing spec={spec} figure={() => figure.current} />
      <details>
        <summary>The numbers</summary>
        <div class="chart-table" tabIndex={0} role="region" aria-label={`${spec.title}: the numbers`}>
          <table role="table">
            <caption class="visually-hidden">{caption}</caption>
            <thead>
              <tr role="row">
                <th scope="col" role="columnheader">
                  {spec.xLabel}
                </th>
                {spec.series.map((series, n) => (
                  <th key={n} scope="col" role="columnheader">
                    {series.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {spec.labels.map((label, row) => (
                <tr key={row} role="row">
                  <th scope="row" role="rowheader">
                    {label}
                  </th>
                  {spec.series.map((series, n) => (
                    <td key={n} role="cell">
                      {numberLabel(series.values[row]!)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  )
}
