/**
 * The container image's HEALTHCHECK: exits 0 when every service this process serves answers
 * `GET /api/v1/health` on its port within two seconds, and 1 otherwise. The services are the ones SERVICES
 * names (comma-separated), all three when it is unset; each on HOST (loopback when HOST listens on every
 * address) at its HUB_PORT, DECISIONS_PORT or TASKS_PORT.
 */
const ports = {
  hub: ["HUB_PORT", 4000],
  decisions: ["DECISIONS_PORT", 4001],
  tasks: ["TASKS_PORT", 4002]
}
const names = (process.env["SERVICES"] || "hub,decisions,tasks")
  .split(",")
  .map((name) => name.trim())
  .filter((name) => name !== "")
const host = (() => {
  const listen = process.env["HOST"] || "127.0.0.1"
  if (listen === "0.0.0.0" || listen === "::") return "127.0.0.1"
  return listen.includes(":") ? `[${listen}]` : listen
})()

const healthy = async (name) => {
  const port = ports[name]
  if (port === undefined) return false
  const url = `http://${host}:${process.env[port[0]] || port[1]}/api/v1/health`
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) })
    return response.status === 200
  } catch {
    return false
  }
}

const answers = await Promise.all(names.map(healthy))
const failed = names.filter((_, index) => !answers[index])
if (failed.length > 0) process.stderr.write(`unhealthy: ${failed.join(", ")}\n`)
process.exit(names.length > 0 && failed.length === 0 ? 0 : 1)
