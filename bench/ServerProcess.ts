import { spawn, type ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { closeSync, openSync, readdirSync, readFileSync } from "node:fs"
import { createServer } from "node:net"
import pg from "pg"

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

export interface ChildService {
  readonly child: ChildProcess
  /** Everything the process printed, kept in a file for when something goes wrong. */
  readonly logFile: string
  readonly stop: () => Promise<void>
  /** CPU seconds (user and system) used so far by the process group: npm, its shell and the server under it. */
  readonly cpuSeconds: () => number
}

/** Linux's clock ticks per second, the unit of /proc/<pid>/stat's CPU times (100 on every common build). */
const ticksPerSecond = 100

/** The fields of /proc/<pid>/stat after the command (which may hold spaces): state ppid pgrp ... */
const statFields = (pid: number | string): ReadonlyArray<string> | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  } catch {
    return undefined
  }
}

/** CPU milliseconds (user and system) a live process has used so far, its threads included; 0 once gone. */
export const processCpuMillis = (pid: number): number => {
  const fields = statFields(pid)
  return fields === undefined ? 0 : ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond
}

/** The live processes of a process group (Linux only; none elsewhere). */
export const processGroupPids = (group: number): Array<number> => {
  let entries: Array<string>
  try {
    entries = readdirSync("/proc")
  } catch {
    return []
  }
  return entries.filter((entry) => /^[0-9]+$/.test(entry) && Number(statFields(entry)?.[2]) === group).map(Number)
}

/** CPU milliseconds used so far by the given processes (a process that has exited counts 0). */
export const processesCpuMillis = (pids: ReadonlyArray<number>): number =>
  pids.reduce((sum, pid) => sum + processCpuMillis(pid), 0)

/**
 * CPU seconds used so far by the live processes of a process group, summed from /proc (Linux only; 0
 * elsewhere). A process's own threads are included; a process that has exited is not, so the group must
 * be the same before and after what is measured.
 */
export const processGroupCpuSeconds = (group: number): number => processesCpuMillis(processGroupPids(group)) / 1000

/**
 * Spawns a command in a process group of its own (npm, its shell and the server under it), its output going
 * straight to `logFile` (not through this process, which is busy generating load). `stop` sends SIGTERM to
 * that group, and SIGKILL if it has not exited after 15 s.
 */
export const spawnService = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly env: Record<string, string | undefined>; readonly logFile: string; readonly cwd: string }
): ChildService => {
  const log = openSync(options.logFile, "a")
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", log, log],
    detached: true
  })
  closeSync(log)
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name)
    } catch {
      // already gone
    }
  }
  return {
    child,
    logFile: options.logFile,
    cpuSeconds: () => (child.pid === undefined ? 0 : processGroupCpuSeconds(child.pid)),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        signal("SIGTERM")
        const timer = setTimeout(() => signal("SIGKILL"), 15_000)
        await exited
        clearTimeout(timer)
      }
    }
  }
}

/** Waits until every URL answers 200, or fails naming the log when the process exits or 120 s pass. */
export const waitUntilReady = async (service: ChildService, urls: ReadonlyArray<string>) => {
  const deadline = Date.now() + 120_000
  for (const url of urls) {
    while (true) {
      if (service.child.exitCode !== null) throw new Error(`the process exited early: see ${service.logFile}`)
      if (Date.now() > deadline) throw new Error(`${url} did not answer within 120 s: see ${service.logFile}`)
      const ok = await fetch(url, { signal: AbortSignal.timeout(5_000) }).then(
        async (response) => (await response.arrayBuffer(), response.ok),
        () => false
      )
      if (ok) break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }
}

export interface BundledServer extends ChildService {
  readonly hub: string
  readonly decisions: string
  readonly tasks: string
}

/**
 * The bundled server, started the way a user starts it (`npm start`, whatever that runs), on free ports,
 * with the given environment on top of PATH and HOME; ready once all three services answer `/api/v1/ready`.
 */
export const startBundledServer = async (options: {
  readonly cwd: string
  readonly env: Record<string, string>
  readonly logFile: string
  /** Instead of `npm start` (profiling runs the compiled server under bench/ProfileOnSignal.mjs). */
  readonly command?: { readonly command: string; readonly args: ReadonlyArray<string> } | undefined
}): Promise<BundledServer> => {
  const ports = { hub: await freePort(), decisions: await freePort(), tasks: await freePort() }
  const command = options.command ?? { command: "npm", args: ["start", "--silent"] }
  const service = spawnService(command.command, command.args, {
    cwd: options.cwd,
    logFile: options.logFile,
    env: {
      PATH: process.env["PATH"],
      HOME: process.env["HOME"],
      HUB_PORT: String(ports.hub),
      DECISIONS_PORT: String(ports.decisions),
      TASKS_PORT: String(ports.tasks),
      ...options.env
    }
  })
  const origin = (port: number) => `http://127.0.0.1:${port}`
  const server = {
    ...service,
    hub: origin(ports.hub),
    decisions: origin(ports.decisions),
    tasks: origin(ports.tasks)
  }
  try {
    await waitUntilReady(
      service,
      [server.hub, server.decisions, server.tasks].map((base) => `${base}/api/v1/ready`)
    )
  } catch (error) {
    await service.stop()
    throw error
  }
  return server
}

/** The raw baseline (bench/BaselineServer.ts) in a child process of its own, like the server under test. */
export const startBaseline = async (options: {
  readonly cwd: string
  readonly env: Record<string, string>
  readonly logFile: string
}): Promise<ChildService & { readonly origin: string }> => {
  const port = await freePort()
  const service = spawnService(process.execPath, ["--import", "tsx", "bench/BaselineServer.ts"], {
    cwd: options.cwd,
    logFile: options.logFile,
    env: { PATH: process.env["PATH"], HOME: process.env["HOME"], BASELINE_PORT: String(port), ...options.env }
  })
  const origin = `http://127.0.0.1:${port}`
  try {
    await waitUntilReady(service, [`${origin}/ready`])
  } catch (error) {
    await service.stop()
    throw error
  }
  return { ...service, origin }
}

/** A database of its own on the Postgres server at `url`, so runs never collide; `drop` removes it. */
export const freshDatabase = async (url: string, prefix: string) => {
  const name = `${prefix}_${randomBytes(5).toString("hex")}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const fresh = new URL(url)
  fresh.pathname = `/${name}`
  return {
    url: fresh.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await client.end()
    }
  }
}
