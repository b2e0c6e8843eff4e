import { Effect, type Scope } from "effect"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"

/** One request a stand-in received, as it arrived. */
export interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

/** What a stand-in answers: a status and a JSON body (or raw text), or nothing at all (the socket is dropped). */
export type StandInAnswer = { readonly status: number; readonly json?: unknown; readonly text?: string } | "drop"

/**
 * A local stand-in of an upstream (the expert roster, a registered service, a link shortener) for the life
 * of the scope: every request is recorded in `seen` and answered by `answer`, which the test may swap.
 */
export const standIn = (answer: (request: Seen) => StandInAnswer) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const state = { answer, seen: [] as Array<Seen> }
      const server = createServer((req, res) => {
        let body = ""
        req.setEncoding("utf8")
        req.on("data", (chunk: string) => (body += chunk))
        req.on("end", () => {
          const seen: Seen = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body }
          state.seen.push(seen)
          const reply = state.answer(seen)
          if (reply === "drop") return void req.socket.destroy()
          const text = reply.text ?? (reply.json === undefined ? "" : JSON.stringify(reply.json))
          res.writeHead(reply.status, { "content-type": reply.text === undefined ? "application/json" : "text/plain" })
          res.end(text)
        })
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      const { port } = server.address() as AddressInfo
      return {
        url: `http://127.0.0.1:${port}`,
        seen: state.seen,
        answerWith: (next: (request: Seen) => StandInAnswer) => void (state.answer = next),
        close: () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections()
            server.close(() => resolve())
          })
      }
    }),
    (standIn) => Effect.promise(standIn.close)
  ) satisfies Effect.Effect<unknown, never, Scope.Scope>

/** An address where nothing listens: a port taken and released again. */
export const unreachableUrl = Effect.promise(async () => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return `http://127.0.0.1:${port}`
})
