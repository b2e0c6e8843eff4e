/**
 * Self and inclusive cost per function in a V8 profile:
 * - of a CPU profile (`node --cpu-prof`, `npm run bench -- --profile`, which keeps
 *   bench/results/profile-<database>.cpuprofile, or bench/createCost.ts `--profile`): the time of its samples,
 *   optionally over a window of it only (the seconds of load, without the start-up and the set-up before them);
 * - of a heap sampling profile (`.heapprofile`, bench/createCost.ts `--profile-kind=heap` or `survivors`): the
 *   bytes allocated.
 *
 *   node bench/profileSums.mjs <file> [--from=<s>] [--to=<s>] [--top=<n>] [--match=<regexp>] [--modules] [--per=<n>]
 *
 * For a CPU profile it prints first how busy each second was (ms of samples that were not idle), to find the
 * window. Then the functions by self cost and by inclusive cost (a function counted once per sample however
 * often it is on the stack), as shares of the whole. `--match` keeps the functions whose name or file
 * matches. `--modules` adds the self cost per source file: for the compiled server (the one module `npm start`
 * runs) each line is named by the source file it came from, found by the `// <path>` line the bundler writes
 * above each file's code. `--per=<n>` also prints each figure divided by n (the creates of the run, say).
 */
import { readFileSync } from "node:fs"

const [file] = process.argv.slice(2).filter((arg) => !arg.startsWith("--"))
if (file === undefined) throw new Error("name a .cpuprofile or a .heapprofile")
const option = (name, fallback) => {
  const found = process.argv.find((arg) => arg.startsWith(`--${name}=`))
  return found === undefined ? fallback : found.slice(name.length + 3)
}
const from = Number(option("from", "0")) * 1000
const to = Number(option("to", "1e9")) * 1000
const top = Number(option("top", "40"))
const per = Number(option("per", "0"))
const match = option("match", undefined)
const keep = match === undefined ? () => true : (label) => new RegExp(match).test(label)

const profile = JSON.parse(readFileSync(file, "utf8"))
const heap = profile.head !== undefined
const unit = heap ? "KB" : "ms"

/** The source file of a line of a bundle: the nearest `// <path>` line above it. */
const bundles = new Map()
const sourceOf = (url, line) => {
  const path = url.replace(/^file:\/\//, "")
  if (!path.endsWith(".mjs") || !path.includes("/.cache/")) return undefined
  let marks = bundles.get(path)
  if (marks === undefined) {
    marks = []
    let text = ""
    try {
      text = readFileSync(path, "utf8")
    } catch {
      // A compiled server since replaced: its lines go unnamed.
    }
    text.split("\n").forEach((text, i) => {
      const found = /^\/\/ (\S+\.[cm]?[jt]s)$/.exec(text)
      if (found !== null) marks.push([i, found[1]])
    })
    bundles.set(path, marks)
  }
  let low = 0
  let high = marks.length - 1
  let found
  while (low <= high) {
    const middle = (low + high) >> 1
    if (marks[middle][0] <= line) {
      found = marks[middle][1]
      low = middle + 1
    } else high = middle - 1
  }
  return found
}

const labelOf = (frame) => {
  const { functionName, url, lineNumber } = frame
  const place = url
    .replace(/^file:\/\//, "")
    .replace(`${process.cwd()}/`, "")
    .replace(/^.*\/(node_modules\/)/, "$1")
  return `${functionName || "(anonymous)"} ${place}:${lineNumber + 1}`
}
const moduleOf = (frame) => sourceOf(frame.url, frame.lineNumber) ?? (frame.url || frame.functionName)

const self = new Map()
const inclusive = new Map()
const modules = new Map()
let total = 0
const add = (totals, key, amount) => totals.set(key, (totals.get(key) ?? 0) + amount)

if (heap) {
  const walk = (node, stack) => {
    const label = labelOf(node.callFrame)
    const path = stack.includes(label) ? stack : [...stack, label]
    const bytes = node.selfSize / 1024
    total += bytes
    add(self, label, bytes)
    add(modules, moduleOf(node.callFrame), bytes)
    for (const on of path) add(inclusive, on, bytes)
    for (const child of node.children) walk(child, path)
  }
  walk(profile.head, [])
} else {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  const parents = new Map()
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id)
  const labels = new Map(profile.nodes.map((node) => [node.id, labelOf(node.callFrame)]))
  const perSecond = new Map()
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
    total += ms
    add(self, labels.get(id), ms)
    add(modules, moduleOf(nodes.get(id).callFrame), ms)
    const seen = new Set()
    for (let node = id; node !== undefined; node = parents.get(node)) {
      const label = labels.get(node)
      if (seen.has(label)) continue
      seen.add(label)
      add(inclusive, label, ms)
    }
  }
  console.log(`busy ms per second: ${[...perSecond].map(([s, ms]) => `${s}:${ms.toFixed(0)}`).join(" ")}`)
}

const print = (title, totals) => {
  console.log(`\n${title}, of ${total.toFixed(0)} ${unit}${heap ? " allocated" : " busy"}:`)
  const rows = [...totals].filter(([label]) => keep(label)).sort((a, b) => b[1] - a[1])
  for (const [label, amount] of rows.slice(0, top)) {
    // Per item: bytes from KB, microseconds from ms.
    const each =
      per > 0 ? `  ${(((heap ? 1024 : 1000) * amount) / per).toFixed(1).padStart(8)} ${heap ? "B" : "µs"} each` : ""
    console.log(
      `${((100 * amount) / total).toFixed(1).padStart(6)} %  ${amount.toFixed(0).padStart(7)} ${unit}${each}  ${label}`
    )
  }
}
print(heap ? "self bytes" : "self time", self)
print(heap ? "inclusive bytes" : "inclusive time", inclusive)
if (process.argv.includes("--modules"))
  print(heap ? "self bytes per source file" : "self time per source file", modules)
