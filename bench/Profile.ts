/**
 * Where a process spent its CPU time, from a V8 CPU profile (`node --cpu-prof`): self time summed per
 * function and per package or source folder. Pure: `summarize` takes the parsed profile.
 */

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly hitCount?: number
}

export interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples?: ReadonlyArray<number>
  readonly timeDeltas?: ReadonlyArray<number>
}

export interface Share {
  readonly name: string
  readonly percent: number
}

export interface ProfileSummary {
  readonly functions: ReadonlyArray<Share>
  readonly places: ReadonlyArray<Share>
  /** Self time per layer of the request stack (`layerOf`), every layer listed. */
  readonly layers: ReadonlyArray<Share>
  /** Milliseconds of samples that were not idle. */
  readonly busyMillis: number
}

/**
 * The layers of the request stack, in the order a request passes them, each with the files that are its
 * code (ours, by path; a library's, by module). A sample is counted in the layer of the function it was in
 * (its self time): a layer's own work, not what it calls. Effect's runtime (the fiber loop, the steps of
 * every pipeline, context and scopes) is a layer of its own: it stands for how many steps the others take.
 */
export const stackLayers: ReadonlyArray<{ readonly name: string; readonly matches: RegExp }> = [
  {
    name: "listener (Node's HTTP, Effect's server)",
    matches:
      /^node:(_http|http|net|stream|internal\/(http|streams|net|stream_base|js_stream))|platform-node|effect\/dist\/http\//
  },
  { name: "request log, metrics", matches: /adapters\/http\/RequestLog\.ts|effect\/dist\/(Metric|Logger|Tracer)\.js/ },
  {
    name: "error envelope, text guard, limits",
    matches:
      /adapters\/http\/(ErrorEnvelopeMiddleware|ErrorResponse|ErrorSchemas|TextGuard|BodyLimit|ContractHeaders|CanonicalHost|CrossSite|ParseOptions|RequestTarget)\.ts/
  },
  {
    name: "contract decoding and encoding (schemas, HttpApi)",
    matches: /effect\/dist\/(schema\/|http-api\/|Schema|JsonSchema)|adapters\/http\/[^/]+\/(Api|Schemas)\.ts/
  },
  {
    name: "authentication, budgets",
    matches:
      /adapters\/http\/[^/]+\/(Auth|AuthLayers|AdminAuth|PersonAuth|CallerBudget|ServiceKeyAuth|ServiceKeyLayer)\.ts|adapters\/http\/(RateLimits|CoalescedRateLimiterStore|EmbedSession)\.ts|core\/auth\/|CallerAuthentication|ApiKey|CredentialCache|LastUses|ratelimits|effect\/dist\/persistence\//
  },
  { name: "idempotency", matches: /Idempotency/ },
  {
    name: "handler: use case and store",
    matches: /adapters\/http\/[^/]+\/[A-Za-z]*Handlers\.ts|(^|\/)core\/|adapters\/(sql|memory)\//
  },
  {
    name: "database client",
    matches:
      /node_modules\/(pg|pg-protocol|pg-pool|postgres-[a-z]+|@effect\/sql-pg|@electric-sql)\/|effect\/dist\/sql\//
  },
  {
    name: "socket writes (answers, database protocol)",
    matches: /^\((writeBuffer|writev|writeUtf8String|WriteWrap)\)$/
  },
  { name: "JSON, crypto, buffers, GC (Node)", matches: /^node:|^\(/ },
  { name: "Effect runtime", matches: /effect\/dist\// }
]

/** The stack layer of a function at `url` (`stackLayers`, first match), or "other". */
export const layerOf = (url: string, functionName: string): string => {
  const where = url === "" ? `(${functionName || "native"})` : url.replace(/^file:\/\//, "")
  return stackLayers.find((layer) => layer.matches.test(where))?.name ?? "other"
}

/** `node_modules/<package>` (scoped packages whole), a source folder such as `adapters/sql`, or what V8 names. */
export const placeOf = (url: string, functionName: string): string => {
  if (url === "") return `(${functionName || "native"})`
  const path = url.replace(/^file:\/\//, "")
  const inModules = /node_modules\/(?!\.cache\/)((?:@[^/]+\/)?[^/]+)/.exec(path)
  if (inModules !== undefined && inModules !== null) return inModules[1]!
  // A bundle names no folders: the whole bundle is one place.
  if (/node_modules\/\.cache\//.test(path)) return "(bundled server)"
  const inSource = /(?:^|\/)(core|adapters|apps|bench)\/([^/]+)\//.exec(path)
  if (inSource !== null) return `${inSource[1]}/${inSource[2]}`
  if (path.startsWith("node:")) return "node internals"
  return path.split("/").slice(-2).join("/")
}

const top = (totals: Map<string, number>, all: number, count: number): ReadonlyArray<Share> =>
  [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, value]) => ({ name, percent: (100 * value) / all }))

/** The `count` heaviest functions and places by self time, as percentages of all samples (idle excluded). */
export const summarize = (profile: CpuProfile, count = 15): ProfileSummary => {
  const byFunction = new Map<string, number>()
  const byPlace = new Map<string, number>()
  const byLayer = new Map<string, number>([...stackLayers.map((layer) => [layer.name, 0] as const), ["other", 0]])
  let all = 0
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0
    const { functionName, url, lineNumber } = node.callFrame
    if (hits === 0 || functionName === "(idle)" || functionName === "(program)") continue
    all += hits
    const file = url.split("/").pop() ?? ""
    const name = `${functionName || "(anonymous)"} ${file === "" ? "" : `${file}:${lineNumber + 1}`}`.trim()
    byFunction.set(name, (byFunction.get(name) ?? 0) + hits)
    const place = placeOf(url, functionName)
    byPlace.set(place, (byPlace.get(place) ?? 0) + hits)
    const layer = layerOf(url, functionName)
    byLayer.set(layer, byLayer.get(layer)! + hits)
  }
  const layers = [...byLayer.entries()].map(([name, value]) => ({ name, percent: all === 0 ? 0 : (100 * value) / all }))
  return {
    functions: top(byFunction, all, count),
    places: top(byPlace, all, count),
    layers,
    busyMillis: all * sampleMillis(profile)
  }
}

/** The mean time between samples, in milliseconds (V8's default interval when the profile does not say). */
const sampleMillis = (profile: CpuProfile): number => {
  const deltas = profile.timeDeltas ?? []
  if (deltas.length === 0) return 1
  return deltas.reduce((sum, delta) => sum + delta, 0) / deltas.length / 1000
}

/**
 * The summary as text. With `requests` (how many the profiled server answered), the layers show CPU time per
 * request as well: the busy time of the whole profile divided by them, so profile one path alone.
 */
export const summaryText = (summary: ProfileSummary, requests?: number): string => {
  const lines = (shares: ReadonlyArray<Share>) =>
    shares.map((share) => `  ${share.percent.toFixed(1).padStart(5)}%  ${share.name}`)
  const perRequest = (share: Share) =>
    requests === undefined || requests === 0
      ? ""
      : `${((10 * share.percent * summary.busyMillis) / requests).toFixed(1).padStart(7)} µs  `
  const layers = summary.layers.map(
    (share) => `  ${share.percent.toFixed(1).padStart(5)}%  ${perRequest(share)}${share.name}`
  )
  const total =
    requests === undefined || requests === 0
      ? []
      : [`  CPU per request: ${((1000 * summary.busyMillis) / requests).toFixed(0)} µs over ${requests} requests`]
  return [
    "self time by layer of the request stack:",
    ...layers,
    ...total,
    "self time by place:",
    ...lines(summary.places),
    "self time by function:",
    ...lines(summary.functions)
  ].join("\n")
}
