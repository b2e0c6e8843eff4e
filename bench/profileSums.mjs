/**
 * Self and inclusive time per function over the samples of a V8 CPU profile (`node --cpu-prof`, or
 * `npm run bench -- --profile`, which keeps bench/results/profile-<database>.cpuprofile), optionally over a
 * window of it only: the seconds of load, without the start-up and the set-up before them.
 *
 *   node bench/profileSums.mjs <file.cpuprofile> [--from=<s>] [--to=<s>] [--top=<n>] [--match=<regexp>]
 *
 * Prints first how busy each second of the profile was (ms of samples that were not idle), to find the
 * window; then the functions by self time and by inclusive time (a function counted once per sample however
 * often it is on the stack), as shares of the window's busy time. `--match` keeps the functions whose name or
 * file matches.
 */
import { readFileSync } from "node:fs"

const [file] = process.argv.slice(2).filter((arg) => !arg.startsWith("--"))
if (file === undefined) throw new Error("name a .cpuprofile")
const option = (name, fallback) => {
  const found = process.argv.find((arg) => arg.startsWith(`--${name}=`))
  return found === undefined ? fallback : found.slice(name.length + 3)
}
const from = Number(option("from", "0")) * 1000
const to = Number(option("to", "1e9")) * 1000
const top = Number(option("top", "40"))
const match = option("match", undefined)
const keep = match === undefined ? () => true : (label) => new RegExp(match).test(label)

const profile = JSON.parse(readFileSync(file, "utf8"))
const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
const parents = new Map()
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id)
const labelOf = (node) => {
  const { functionName, url, lineNumber } = node.callFrame
  const place = url
    .replace(/^file:\/\//, "")
    .replace(`${process.cwd()}/`, "")
    .replace(/^.*\/(node_modules\/)/, "$1")
  return `${functionName || "(anonymous)"} ${place}:${lineNumber + 1}`
}
const labels = new Map(profile.nodes.map((node) => [node.id, labelOf(node)]))

const self = new Map()
const inclusive = new Map()
const perSecond = new Map()
let busy = 0
let at = 0
for (let i = 0; i < profile.samples.length; i++) {
  at += profile.timeDeltas[i] / 1000
  const id = profile.samples[i]
  const name = nodes.get(id).callFrame.functionName
  if (name === "(idle)" || name === "(program)") continue
  const ms = (profile.timeDeltas[i + 1] ?? profile.timeDeltas[i]) / 1000
  const second = Math.floor(at / 1000)
  perSecond.set(second, (perSecond.get(second) ?? 0) + ms)
  if (at < from || at > to) continue
  busy += ms
  self.set(labels.get(id), (self.get(labels.get(id)) ?? 0) + ms)
  const seen = new Set()
  for (let node = id; node !== undefined; node = parents.get(node)) {
    const label = labels.get(node)
    if (seen.has(label)) continue
    seen.add(label)
    inclusive.set(label, (inclusive.get(label) ?? 0) + ms)
  }
}

const print = (title, totals) => {
  console.log(`\n${title}, of ${busy.toFixed(0)} ms busy:`)
  const rows = [...totals].filter(([label]) => keep(label)).sort((a, b) => b[1] - a[1])
  for (const [label, ms] of rows.slice(0, top)) {
    console.log(`${((100 * ms) / busy).toFixed(1).padStart(6)} %  ${ms.toFixed(0).padStart(7)} ms  ${label}`)
  }
}
console.log(`busy ms per second: ${[...perSecond].map(([s, ms]) => `${s}:${ms.toFixed(0)}`).join(" ")}`)
print("self time", self)
print("inclusive time", inclusive)
