import { spawn, type ChildProcess } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

const bindable = (port: number) =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })

/**
 * A free loopback port. Chosen at random below the range the system hands out to outgoing connections
 * (32768 and up), so that between this check and the server's own bind no client connection of another
 * test takes it; port 0 (any free port) when none of a few tries is free.
 */
export const freePort = async (): Promise<number> => {
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    const free = await bindable(port).then(
      () => true,
      () => false
    )
    if (free) return port
  }
  return bindable(0)
}

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

type StartOptions = { readonly waitReady?: boolean; readonly compiled?: boolean; readonly readyWithinMillis?: number }

/**
 * Starts the bundled server in a child process from its TypeScript sources, and waits until its services (all
 * three, or those `env.SERVICES` names) listen.
 * With `compiled`, it starts exactly as `npm start` does instead: scripts/start.mjs, which compiles the server
 * when its sources changed and runs the compiled bundle. A start that finds a port taken by another process
 * (tests run in parallel) is tried again: on new ports, or on the same ones a moment later when `env` fixed them.
 */
export const startServer = async (env: Record<string, string | undefined>, options: StartOptions = {}) => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(env, options)
    } catch (error) {
      const taken =
        error instanceof Error && (error.message.includes("EADDRINUSE") || error.message.includes("is already in use"))
      if (!taken || attempt === 3) throw error
      await new Promise((r) => setTimeout(r, 500))
    }
  }
}

const startOnce = async (env: Record<string, string | undefined>, options: StartOptions) => {
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
    // Only the services of SERVICES listen (all three unless it says otherwise).
    const services = (env["SERVICES"] ?? "hub,decisions,tasks").split(",").map((name) => name.trim())
    const listening = Object.entries(ports).filter(([service]) => services.includes(service))
    for (const [, port] of listening) {
      while (true) {
        if (child.exitCode !== null) throw new Error(`the server exited early:\n${output}`)
        if (Date.now() > deadline) {
          // Not left running behind the failed start: nothing else would stop it.
          child.kill("SIGKILL")
          throw new Error(`the server did not start:\n${output}`)
        }
        // Bounded: a port held by something else that never answers must not hold the wait forever.
        const ok = await fetch(`http://127.0.0.1:${port}/api/v1/health`, { signal: AbortSignal.timeout(2_000) }).then(
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

/** `npm run seed` as a newcomer runs it, on the settings in `env`: its exit code and output once it has exited. */
export const runSeed = (env: Record<string, string>) =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    let output = ""
    const child = spawn(process.execPath, ["--import", "tsx", "apps/server/seed.ts"], {
      cwd: process.cwd(),
      env: { PATH: process.env["PATH"], HOME: process.env["HOME"], LOG_LEVEL: "Warn", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    child.stdout!.on("data", (chunk) => (output += chunk))
    child.stderr!.on("data", (chunk) => (output += chunk))
    child.once("exit", (code) => resolve({ code, output }))
  })
