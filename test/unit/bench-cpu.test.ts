import { assert, describe, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { processGroupCpuSeconds, spawnService } from "../../bench/ServerProcess.ts"

describe("bench CPU time of a served process group", () => {
  it("sums the CPU its processes used, a busy child included, and nothing of other groups", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bench-cpu-"))
    // A parent whose child spins until it has used 400 ms of CPU (not of the clock: the machine may be busy),
    // then both idle until stopped.
    const script =
      "require('child_process').spawn(process.execPath, ['-e', 'while (process.cpuUsage().user < 400000) {} setInterval(() => {}, 1000)'], { stdio: 'ignore' }); setInterval(() => {}, 1000)"
    const service = spawnService(process.execPath, ["-e", script], { cwd: dir, env: {}, logFile: join(dir, "log") })
    try {
      const before = service.cpuSeconds()
      // Read until the child's spin shows (it counts only once the child runs), however busy the machine.
      const deadline = Date.now() + 30_000
      let used = 0
      while (used < 0.4 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        used = service.cpuSeconds() - before
      }
      assert.isAtLeast(used, 0.4)
      assert.isBelow(used, 5)
      assert.strictEqual(processGroupCpuSeconds(2 ** 22 + 7), 0)
    } finally {
      await service.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
