import { assert, describe, it } from "@effect/vitest"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { answerWhileStarting } from "../../adapters/http/ServiceHttp.ts"

/**
 * A listener's port opens before its routes are served. A request in between used to be read and never
 * answered (a readiness check, a peer's event, a load balancer's probe waited until it gave up); now it is
 * answered 503 with `Retry-After` in the error envelope, and once the routes listen nothing of this is left.
 */
describe("a listener between its port and its routes", () => {
  it("answers 503 with Retry-After, then steps aside for the routes", async () => {
    const server = answerWhileStarting(createServer())
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/ready`
      const early = await fetch(url, { signal: AbortSignal.timeout(5_000) })
      assert.strictEqual(early.status, 503)
      assert.strictEqual(early.headers.get("retry-after"), "1")
      const body = (await early.json()) as { error: { code: string; message: string } }
      assert.strictEqual(body.error.code, "UNAVAILABLE")
      assert.strictEqual(body.error.message, "The service is starting. Retry in a moment.")

      // The routes attach: they alone answer from then on.
      server.on("request", (_request, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        response.end("ready")
      })
      const served = await fetch(url, { signal: AbortSignal.timeout(5_000) })
      assert.strictEqual(served.status, 200)
      assert.strictEqual(await served.text(), "ready")
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
