import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, assert, describe, it } from "vitest"
import { freePort, startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"

const running: Array<RunningServer> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
})

/** An OpenTelemetry collector stand-in: records the path and JSON body of every OTLP/HTTP export. */
const startCollector = async () => {
  const received: Array<{ readonly path: string; readonly body: any }> = []
  const read = (request: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let text = ""
      request.on("data", (chunk) => (text += chunk))
      request.on("end", () => resolve(text))
    })
  const server = createServer(async (request, response) => {
    const text = await read(request)
    received.push({ path: request.url ?? "", body: text.length > 0 ? JSON.parse(text) : undefined })
    response.writeHead(200, { "content-type": "application/json" }).end("{}")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { received, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() }
}

const eventually = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 100))
  assert.isTrue(check(), what)
}

describe("operating the bundled server", () => {
  it("serves Prometheus metrics on METRICS_PORT and exports logs with the request id and traces over OTLP", async () => {
    const collector = await startCollector()
    const metricsPort = await freePort()
    const server = await startServer({
      DATA_DIR: tempDataDir(),
      METRICS_PORT: String(metricsPort),
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      // The line of each answer is at debug level outside production.
      LOG_LEVEL: "Debug"
    })
    running.push(server)
    try {
      const health = await fetch(`http://127.0.0.1:${server.ports.decisions}/api/v1/health`, {
        headers: { "x-request-id": "probe-1" }
      })
      assert.strictEqual(health.headers.get("x-request-id"), "probe-1")
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
      assert.match(metrics, /http_server_requests_total\{[^}]*service="decisions"[^}]*\} \d+/)
      assert.match(metrics, /http_server_request_duration_ms_bucket\{[^}]*service="decisions"/)
      // The public listeners do not serve it.
      const hubMetrics = await (await fetch(`http://127.0.0.1:${server.ports.hub}/metrics`)).text()
      assert.notInclude(hubMetrics, "http_server_requests_total")

      const exported = () =>
        collector.received.some((r) => r.path === "/v1/logs" && JSON.stringify(r.body).includes("probe-1"))
      await eventually(exported, "a log line carrying the request id reached the collector")
      const logs = collector.received.find((r) => r.path === "/v1/logs" && JSON.stringify(r.body).includes("probe-1"))
      assert.include(JSON.stringify(logs!.body), "decisions")
      // Tracing is on when there is a collector to send spans to (off otherwise: spans nobody reads cost every
      // request): the health request's span reaches it.
      const traced = () =>
        collector.received.some((r) => r.path === "/v1/traces" && JSON.stringify(r.body).includes("/api/v1/health"))
      await eventually(traced, "the span of a request reached the collector")
    } finally {
      collector.close()
    }
  }, 90_000)
})
