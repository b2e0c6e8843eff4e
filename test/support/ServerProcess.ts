import { spawn, type ChildProcess } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** A free loopback port, found by binding port 0. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })

export const tempDataDir = () => mkdtempSync(join(tmpdir(), "hitl-server-"))

export interface RunningServer {
  readonly child: ChildProcess
  readonly ports: { readonly hub: number; readonly decisions: number; readonly tasks: number }
  readonly output: () => string
  readonly exited: Promise<number | null>
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

/** Servers still running when the test process ends (a test that timed out) are killed with it. */
const running = new Set<ChildProcess>()
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL")
})

/**
 * Starts the bundled server in a child process from its TypeScript sources, and waits until all three listen.
 * With `compiled`, it starts exactly as `npm start` does instead: scripts/start.mjs, which compiles the server
 * when its sources changed and runs the compiled bundle.
 */
export const startServer = async (
  env: Record<string, string | undefined>,
  options: { readonly waitReady?: boolean; readonly compiled?: boolean; readonly readyWithinMillis?: number } = {}
) => {
  // Ports given in `env` are kept (a restart on the same addresses); the others are chosen free.
  const portOf = async (name: string) => (env[name] === undefined ? freePort() : Number(env[name]))
  const ports = {
    hub: await portOf("HUB_PORT"),
    decisions: await portOf("DECISIONS_PORT"),
    tasks: await portOf("TASKS_PORT")
  }
  let output = ""
  const entry = options.compiled === true ? ["scripts/start.mjs"] : ["--import", "tsx", "apps/server/main.ts"]
  const child = spawn(process.execPath, entry, {
    cwd: process.cwd(),
    env: {
      PATH: process.env["PATH"],
      HOME: process.env["HOME"],
      HUB_PORT: String(ports.hub),
      DECISIONS_PORT: String(ports.decisions),
      TASKS_PORT: String(ports.tasks),
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  running.add(child)
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      running.delete(child)
      resolve(code)
    })
  )
  const server: RunningServer = {
    child,
    ports,
    output: () => output,
    exited,
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode === null) child.kill(signal)
      return exited
    }
  }
  if (options.waitReady !== false) {
    const deadline = Date.now() + (options.readyWithinMillis ?? 60_000)
    for (const port of Object.values(ports)) {
      while (true) {
        if (child.exitCode !== null) throw new Error(`the server exited early:\n${output}`)
        if (Date.now() > deadline) throw new Error(`the server did not start:\n${output}`)
        const ok = await fetch(`http://127.0.0.1:${port}/api/v1/health`).then(
          (r) => r.ok,
          () => false
        )
        if (ok) break
        await new Promise((r) => setTimeout(r, 100))
      }
    }
  }
  return server
}
