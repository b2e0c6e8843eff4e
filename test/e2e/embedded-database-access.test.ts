import { spawn } from "node:child_process"
import { existsSync, readFileSync, readdirSync, readlinkSync, statSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"
import { mintToken } from "../support/Tokens.ts"

/** The TCP ports a process listens on: its sockets (/proc/<pid>/fd) found in LISTEN state in /proc/net/tcp{,6}. */
const listeningPorts = (pid: number): Array<number> => {
  const inodes = new Set<string>()
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    const target = (() => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`)
      } catch {
        return ""
      }
    })()
    const socket = /^socket:\[(\d+)\]$/.exec(target)
    if (socket !== null) inodes.add(socket[1]!)
  }
  const ports = new Set<number>()
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!existsSync(table)) continue
    for (const line of readFileSync(table, "utf8").trim().split("\n").slice(1)) {
      const columns = line.trim().split(/\s+/)
      const [, local, , state] = columns
      if (state === "0A" && inodes.has(columns[9]!)) ports.add(Number.parseInt(local!.split(":")[1]!, 16))
    }
  }
  return [...ports].sort((a, b) => a - b)
}

/** Tries to open the socket at `path` as the account `uid`: "connected", or the error's code. */
const connectAs = (uid: number, path: string) =>
  new Promise<string>((resolve) => {
    const child = spawn(
      process.execPath,
      [
        "-e",
        `const s = require("node:net").connect(${JSON.stringify(path)});` +
          `s.on("connect", () => { console.log("connected"); s.destroy() });` +
          `s.on("error", (e) => console.log(e.code))`
      ],
      { uid, gid: uid, stdio: ["ignore", "pipe", "inherit"] }
    )
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.on("exit", () => resolve(output.trim()))
  })

const nobody = 65534

/** A write and a read through the server's database: a role created, then listed. */
const createAndListRole = async (server: RunningServer, dataDir: string, slug: string) => {
  const secrets = JSON.parse(readFileSync(join(dataDir, "dev-secrets.json"), "utf8")) as Record<string, string>
  const token = await mintToken({
    key: secrets["DECISIONS_EMBED_KEY"]!,
    issuer: "platform-hub",
    audience: "decisions",
    email: "admin@acme.test",
    companyId: "acme",
    orgRole: "OWNER"
  })
  const headers = {
    "content-type": "application/json",
    "x-decisions-api-key": secrets["DECISIONS_API_KEY"]!,
    "x-workspace-token": token
  }
  const base = `http://127.0.0.1:${server.ports.decisions}/api/v1/workspace/roles`
  const created = await fetch(base, { method: "POST", headers, body: JSON.stringify({ slug, name: slug }) })
  assert.strictEqual(created.status, 201, await created.clone().text())
  const listed = (await (await fetch(base, { headers })).json()) as { data: { roles: Array<{ slug: string }> } }
  return listed.data.roles.map((role) => role.slug)
}

const checkReachableOnlyByThisAccount = async (server: RunningServer, dataDir: string) => {
  // Three listeners, the services' own: nothing else of the process accepts TCP connections.
  const { hub, decisions, tasks } = server.ports
  assert.deepStrictEqual(
    listeningPorts(server.child.pid!),
    [hub, decisions, tasks].sort((a, b) => a - b)
  )
  const socket = join(dataDir, "pglite.sock")
  assert.isTrue(statSync(socket).isSocket())
  assert.strictEqual(statSync(socket).mode & 0o777, 0o600)
  assert.strictEqual(statSync(dataDir).mode & 0o777, 0o700)
  assert.strictEqual(await connectAs(process.getuid!(), socket), "connected")
  // Another account cannot reach it (only root can start a process as another account: CI runs as root).
  if (process.getuid!() === 0) assert.strictEqual(await connectAs(nobody, socket), "EACCES")
}

describe("the embedded database is reachable by the server's account only (a real process)", () => {
  it("on a new data directory and again on the same one after a kill: no TCP port, a 0600 socket in DATA_DIR", async () => {
    const dataDir = tempDataDir()
    const first = await startServer({ DATA_DIR: dataDir })
    try {
      await checkReachableOnlyByThisAccount(first, dataDir)
      assert.include(await createAndListRole(first, dataDir, "before"), "before")
    } finally {
      await first.stop("SIGKILL")
    }
    // The killed server left its socket behind; the next start on the same data replaces it.
    assert.isTrue(existsSync(join(dataDir, "pglite.sock")))
    const next = await startServer({ DATA_DIR: dataDir })
    try {
      await checkReachableOnlyByThisAccount(next, dataDir)
      const slugs = await createAndListRole(next, dataDir, "after")
      assert.includeMembers(slugs, ["before", "after"])
    } finally {
      assert.strictEqual(await next.stop("SIGTERM"), 0)
    }
    assert.isFalse(existsSync(join(dataDir, "pglite.sock")))
  }, 180_000)
})
