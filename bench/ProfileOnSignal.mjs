/**
 * Preloaded into a benchmarked server (`node --import ./bench/ProfileOnSignal.mjs`): SIGWINCH starts a profile
 * of the process, the next SIGWINCH writes it to $PROFILE_DIR/<time>.cpuprofile (or .heapprofile). So a
 * benchmark profiles only the window it measures. Open it in Chrome's DevTools or read it with
 * bench/profileSums.mjs.
 *
 * PROFILE_KIND chooses what is sampled:
 * - `cpu` (the default): where the time goes;
 * - `heap`: where the memory is allocated, every allocation sampled, what was soon collected included;
 * - `survivors`: only the allocations a young-generation collection did not free (those that lived across
 *   one and were moved on, the ones that make each such collection slower).
 */
import { writeFileSync } from "node:fs"
import { Session } from "node:inspector"
import { join } from "node:path"

const dir = process.env["PROFILE_DIR"] ?? "."
const kind = process.env["PROFILE_KIND"] ?? "cpu"
let session

const start = (current) => {
  if (kind === "cpu") {
    current.post("Profiler.enable", () =>
      current.post("Profiler.setSamplingInterval", { interval: 250 }, () => current.post("Profiler.start"))
    )
    return
  }
  current.post("HeapProfiler.enable", () =>
    current.post("HeapProfiler.startSampling", {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: kind === "heap"
    })
  )
}

const stop = (current) => {
  const [method, suffix] =
    kind === "cpu" ? ["Profiler.stop", "cpuprofile"] : ["HeapProfiler.stopSampling", "heapprofile"]
  current.post(method, (error, result) => {
    if (error === null) writeFileSync(join(dir, `${Date.now()}.${suffix}`), JSON.stringify(result.profile))
    current.disconnect()
  })
}

process.on("SIGWINCH", () => {
  if (session === undefined) {
    session = new Session()
    session.connect()
    start(session)
    return
  }
  const current = session
  session = undefined
  stop(current)
})
