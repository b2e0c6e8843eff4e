/**
 * The benchmark's figures and how they are shown: one row per path, database and connection count, the
 * bundled server beside its raw baseline. Pure: no I/O, so the formatting is unit-tested.
 */

/** What one load run measured. Latencies are over every answer, whatever its status. */
export interface Figures {
  readonly requests: number
  readonly seconds: number
  readonly requestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  /** Answers outside 2xx, by status: a run that has any measured the wrong thing. */
  readonly non2xx: Readonly<Record<string, number>>
  /** Connection errors and timeouts. */
  readonly errors: number
  /** CPU milliseconds the serving processes used per answer over the measured run, when it was read. */
  readonly cpuMsPerRequest?: number | undefined
}

export interface Row {
  readonly path: string
  readonly database: string
  readonly connections: number
  readonly server: Figures
  readonly baseline: Figures | undefined
}

/** A figure measured elsewhere (the long-poll wake, the start time), shown under the table. */
export interface ExtraFigure {
  readonly name: string
  readonly value: number | string
  readonly unit?: string | undefined
}

export interface Machine {
  readonly cpus: number
  readonly memory: string
  readonly node: string
  readonly date: string
}

export interface Report {
  readonly machine: Machine
  readonly rows: ReadonlyArray<Row>
  readonly extras: ReadonlyArray<ExtraFigure>
}

/** Nearest-rank percentile of latencies already sorted ascending; 0 for none. */
export const percentile = (sorted: ArrayLike<number>, p: number): number => {
  if (sorted.length === 0) return 0
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!
}

/** Server throughput as a fraction of the baseline's (1 = as fast as the raw floor); undefined without one. */
export const ratio = (server: Figures, baseline: Figures | undefined): number | undefined =>
  baseline === undefined || baseline.requestsPerSecond === 0
    ? undefined
    : server.requestsPerSecond / baseline.requestsPerSecond

export const failures = (figures: Figures): number =>
  Object.values(figures.non2xx).reduce((sum, n) => sum + n, 0) + figures.errors

/** Every row whose server or baseline run saw a non-2xx answer or a connection error, described. */
export const failedRuns = (rows: ReadonlyArray<Row>): ReadonlyArray<string> =>
  rows.flatMap((row) =>
    (
      [
        ["server", row.server],
        ["baseline", row.baseline]
      ] as const
    ).flatMap(([side, figures]) =>
      figures === undefined || failures(figures) === 0
        ? []
        : [
            `${row.path} (${row.database}, ${row.connections} conn) ${side}: ` +
              [
                ...Object.entries(figures.non2xx).map(([status, n]) => `${n} × ${status}`),
                ...(figures.errors > 0 ? [`${figures.errors} errors`] : [])
              ].join(", ")
          ]
    )
  )

/**
 * What a plugged-in script answers, as lines: `{name, value, unit?}` as it is; a list, item by item; a
 * figure per database (`{database, ...}`) named after it; a field ending in `Millis` as milliseconds.
 */
export const asExtraFigures = (source: string, value: unknown): ReadonlyArray<ExtraFigure> => {
  if (Array.isArray(value)) return value.flatMap((item) => asExtraFigures(source, item))
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>
    if (typeof record["name"] === "string" && ["number", "string"].includes(typeof record["value"])) {
      const unit = record["unit"]
      return [
        {
          name: record["name"],
          value: record["value"] as number | string,
          unit: typeof unit === "string" ? unit : undefined
        }
      ]
    }
    const label = typeof record["database"] === "string" ? `${source} (${record["database"]})` : source
    return Object.entries(record).flatMap(([key, inner]): ReadonlyArray<ExtraFigure> => {
      if (key === "database") return []
      if (typeof inner === "number" && key.endsWith("Millis")) {
        return [{ name: `${label} ${key.slice(0, -"Millis".length)}`, value: inner, unit: "ms" }]
      }
      if (typeof inner === "number" || typeof inner === "string") return [{ name: `${label} ${key}`, value: inner }]
      if (Array.isArray(inner)) {
        const parts = inner.map((item) =>
          typeof item === "object" && item !== null
            ? Object.entries(item as Record<string, unknown>)
                .map(([field, part]) => (field.endsWith("Millis") ? `${part} ms` : String(part)))
                .join(" ")
            : String(item)
        )
        return [{ name: `${label} ${key}`, value: parts.join(", ") }]
      }
      return asExtraFigures(`${label} ${key}`, inner)
    })
  }
  return typeof value === "number" || typeof value === "string" ? [{ name: source, value }] : []
}

const rate = (n: number) => Math.round(n).toLocaleString("en")
const ms = (n: number) => (n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0))
const times = (n: number | undefined) => (n === undefined ? "-" : n < 0.1 ? n.toFixed(3) : n.toFixed(2))
const cpu = (n: number | undefined) => (n === undefined ? "-" : n.toFixed(2))
const failuresText = (figures: Figures | undefined) => (figures === undefined ? "-" : String(failures(figures)))

const headers = [
  "path",
  "database",
  "conn",
  "req/s",
  "p50 ms",
  "p99 ms",
  "cpu ms",
  "non-2xx",
  "raw req/s",
  "raw p50",
  "raw p99",
  "raw cpu",
  "raw non-2xx",
  "ratio"
] as const
const rightAligned = new Set(headers.slice(2))

const cells = (row: Row): ReadonlyArray<string> => [
  row.path,
  row.database,
  String(row.connections),
  rate(row.server.requestsPerSecond),
  ms(row.server.p50Ms),
  ms(row.server.p99Ms),
  cpu(row.server.cpuMsPerRequest),
  failuresText(row.server),
  row.baseline === undefined ? "-" : rate(row.baseline.requestsPerSecond),
  row.baseline === undefined ? "-" : ms(row.baseline.p50Ms),
  row.baseline === undefined ? "-" : ms(row.baseline.p99Ms),
  cpu(row.baseline?.cpuMsPerRequest),
  failuresText(row.baseline),
  times(ratio(row.server, row.baseline))
]

const extraLine = (extra: ExtraFigure) =>
  `${extra.name}: ${typeof extra.value === "number" ? ms(extra.value) : extra.value}${extra.unit === undefined ? "" : ` ${extra.unit}`}`

/** The table for a terminal: columns padded, numbers right-aligned. */
export const textTable = (rows: ReadonlyArray<Row>, extras: ReadonlyArray<ExtraFigure> = []): string => {
  const body = rows.map(cells)
  const widths = headers.map((header, i) => Math.max(header.length, ...body.map((line) => line[i]!.length)))
  const line = (values: ReadonlyArray<string>) =>
    values
      .map((value, i) => (rightAligned.has(headers[i]!) ? value.padStart(widths[i]!) : value.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd()
  return [
    line(headers),
    line(widths.map((w) => "-".repeat(w))),
    ...body.map(line),
    ...(extras.length === 0 ? [] : ["", ...extras.map(extraLine)])
  ].join("\n")
}

/** The same table as markdown, for docs/performance.md. */
export const markdownTable = (rows: ReadonlyArray<Row>, extras: ReadonlyArray<ExtraFigure> = []): string => {
  const line = (values: ReadonlyArray<string>) => `| ${values.join(" | ")} |`
  const rule = headers.map((header) => (rightAligned.has(header) ? "---:" : "---"))
  return [
    line(headers),
    line(rule),
    ...rows.map((row) => line(cells(row))),
    ...(extras.length === 0 ? [] : ["", ...extras.map((extra) => `- ${extraLine(extra)}`)])
  ].join("\n")
}

export const machineLine = (machine: Machine): string =>
  `${machine.cpus} CPUs, ${machine.memory} memory, Node ${machine.node}, ${machine.date}`
