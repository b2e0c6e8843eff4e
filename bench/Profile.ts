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
  }
  return { functions: top(byFunction, all, count), places: top(byPlace, all, count) }
}

export const summaryText = (summary: ProfileSummary): string => {
  const lines = (shares: ReadonlyArray<Share>) =>
    shares.map((share) => `  ${share.percent.toFixed(1).padStart(5)}%  ${share.name}`)
  return ["self time by place:", ...lines(summary.places), "self time by function:", ...lines(summary.functions)].join(
    "\n"
  )
}
