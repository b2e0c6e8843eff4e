import { createHmac, timingSafeEqual } from "node:crypto"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { Webhook } from "standardwebhooks"

export interface Received {
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** Both signatures checked, independently of the service's code. */
  readonly verified: boolean
}

/** What the receiver does with one request: answer a status (with headers), or never answer. */
export type Behaviour = { readonly status: number; readonly headers?: Record<string, string> } | "hang"

/**
 * A webhook receiver for tests. It verifies `X-Decisions-Signature` with node:crypto written here (HMAC-SHA256
 * over `<timestamp>.<raw body>` keyed with the secret, 300 s skew) and the Standard Webhooks headers with the
 * `standardwebhooks` package; `accepted` holds the bodies it answered 2xx, deduped by the body's id as a
 * receiver should.
 */
export const startReceiver = async (secret: () => string, behave: (attempt: number, id: string) => Behaviour) => {
  const received: Array<Received> = []
  const attempts = new Map<string, number>()
  const accepted = new Map<string, unknown>()
  const server = createServer((req, res) => {
    let body = ""
    req.setEncoding("utf8")
    req.on("data", (chunk: string) => (body += chunk))
    req.on("end", () => {
      const headers = req.headers
      const timestamp = String(headers["x-decisions-timestamp"] ?? "")
      const expected = `v1=${createHmac("sha256", secret()).update(`${timestamp}.${body}`).digest("hex")}`
      const presented = String(headers["x-decisions-signature"] ?? "")
      const fresh = Math.abs(Date.now() / 1000 - Number(timestamp)) <= 300
      const ours =
        fresh && presented.length === expected.length && timingSafeEqual(Buffer.from(presented), Buffer.from(expected))
      let standard = true
      try {
        new Webhook(secret()).verify(body, {
          "webhook-id": String(headers["webhook-id"]),
          "webhook-timestamp": String(headers["webhook-timestamp"]),
          "webhook-signature": String(headers["webhook-signature"])
        })
      } catch {
        standard = false
      }
      received.push({ headers, body, verified: ours && standard })
      const id = (JSON.parse(body) as { id: string }).id
      const attempt = (attempts.get(id) ?? 0) + 1
      attempts.set(id, attempt)
      const behaviour = behave(attempt, id)
      if (behaviour === "hang") return
      if (behaviour.status >= 200 && behaviour.status < 300 && ours && standard) accepted.set(id, JSON.parse(body))
      res.writeHead(behaviour.status, behaviour.headers ?? {})
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks/decisions`,
    received,
    accepted,
    attempts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
