/**
 * Preloaded into a benchmarked server (`node --import ./bench/ProfileOnSignal.mjs`): SIGWINCH starts a CPU
 * profile of the process, the next SIGWINCH writes it to $PROFILE_DIR/<time>.cpuprofile (open it in Chrome's
 * DevTools or read it with bench/ProfileSummary.ts). So a benchmark profiles only the window it measures.
 */
import { writeFileSync } from "node:fs"
import { Session } from "node:inspector"
import { join } from "node:path"

const dir = process.env["PROFILE_DIR"] ?? "."
let session

process.on("SIGWINCH", () => {
  if (session === undefined) {
    session = new Session()
    session.connect()
    session.post("Profiler.enable", () =>
      session.post("Profiler.setSamplingInterval", { interval: 250 }, () => session.post("Profiler.start"))
    )
    return
  }
  const current = session
  session = undefined
  current.post("Profiler.stop", (error, result) => {
    if (error === null) writeFileSync(join(dir, `${Date.now()}.cpuprofile`), JSON.stringify(result.profile))
    current.disconnect()
  })
})
