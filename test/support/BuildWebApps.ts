import { spawnSync } from "node:child_process"

/**
 * Vitest's global setup: the web apps the services serve are built before any test starts a server (skipped in
 * a few milliseconds when their sources are unchanged, see scripts/build-web.mjs).
 */
export default function buildWebApps() {
  const result = spawnSync(process.execPath, ["scripts/build-web.mjs"], {
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8"
  })
  if (result.status !== 0) throw new Error(`the web apps did not build:\n${result.stdout}${result.stderr}`)
}
