import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { connect } from "node:net"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { startServer, tempDataDir, type RunningServer, runSeed } from "../support/ServerProcess.ts"
import { mintToken } from "../support/Tokens.ts"

const machineKey = "ops-machine-key-0123456789abcdef"
let server: RunningServer
let dataDir: string
let secrets: Record<string, string>
let callerKey: string

const url = (port: number, path: string) => `http://127.0.0.1:${port}${path}`

/** The raw bytes of one HTTP exchange over a socket: what a client that sends malformed HTTP sees. */
const raw = (port: number, bytes: string) =>
  new Promise<string>((resolve, reject) => {
    let answer = ""
    const socket = connect(port, "127.0.0.1", () => socket.end(bytes))
    socket.on("data", (chunk) => (answer += chunk))
    socket.on("end", () => resolve(answer))
    socket.on("error", reject)
  })

const bodyOf = (answer: string) => answer.slice(answer.indexOf("\r\n\r\n") + 4)

/** A request through node:http, which sends the path exactly as written (fetch would normalize it). */
const send = (port: number, method: string, path: string, headers: Record<string, string>, body?: string) =>
  new Promise<{ status: number; headers: Record<string, unknown>; text: string }>((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, method, path, headers }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (chunk) => (text += chunk))
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, text }))
    })
    req.on("error", reject)
    req.end(body)
  })

beforeAll(async () => {
  dataDir = tempDataDir()
  server = await startServer({ DATA_DIR: dataDir, TASKS_MACHINE_KEYS: `${machineKey}:ops@example.com:Ops Bot` })
  secrets = JSON.parse(readFileSync(join(dataDir, "dev-secrets.json"), "utf8")) as Record<string, string>
  const token = await mintToken({
    key: secrets["DECISIONS_EMBED_KEY"]!,
    issuer: "platform-hub",
    audience: "decisions",
    email: "admin@acme.test",
    companyId: "acme",
    orgRole: "OWNER"
  })
  const workspace = async (path: string, body: unknown) => {
    const response = await fetch(url(server.ports.decisions, path), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-decisions-api-key": secrets["DECISIONS_API_KEY"]!,
        "x-workspace-token": token
      },
      body: JSON.stringify(body)
    })
    return (await response.json()) as any
  }
  await workspace("/api/v1/workspace/roles", { slug: "ops", name: "Ops" })
  callerKey = (await workspace("/api/v1/workspace/keys", { name: "agent" })).data.plaintext as string
}, 120_000)

afterAll(async () => {
  await server?.stop("SIGKILL")
})

describe("hardening of the bundled server (a real process, the embedded default)", () => {
  it("text with an unpaired surrogate is a 400 naming the field on all three services, never a 5xx", async () => {
    // The escape is sent as JSON text: JSON.stringify would write the same `\ud800`.
    const decision = await fetch(url(server.ports.decisions, "/api/v1/decisions"), {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${callerKey}`, "idempotency-key": "k-1" },
      body: '{"title":"a\\ud800","roleSlug":"ops","options":[{"label":"Yes"},{"label":"No"}]}'
    })
    assert.strictEqual(decision.status, 400)
    const decisionBody = (await decision.json()) as any
    assert.strictEqual(decisionBody.error.code, "validation_error")
    assert.deepInclude(decisionBody.error.details, {
      in: "body",
      field: "title",
      message: "must be valid Unicode text (it holds an unpaired surrogate)"
    })

    const task = await fetch(url(server.ports.tasks, "/api/tasks"), {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": machineKey },
      body: '{"title":"ok","description":"\\udc00 alone"}'
    })
    assert.strictEqual(task.status, 400)
    const taskBody = (await task.json()) as any
    assert.strictEqual(taskBody.error, "Validation failed")
    assert.property(taskBody.fields, "description")

    const catalog = await fetch(url(server.ports.hub, "/api/v1/admin/event-catalog"), {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${secrets["HUB_ADMIN_KEY"]}` },
      body: '{"type":"tasks.thing.done","producer":"tasks","dataSchema":{"type":"object","description":"\\ud83d"}}'
    })
    assert.strictEqual(catalog.status, 400)
    const catalogBody = (await catalog.json()) as any
    assert.strictEqual(catalogBody.error.code, "VALIDATION_ERROR")
    assert.deepInclude(catalogBody.error.details, {
      in: "body",
      field: "dataSchema.description",
      message: "must be valid Unicode text (it holds an unpaired surrogate)"
    })

    // A well-formed pair (an emoji) is text like any other.
    const emoji = await fetch(url(server.ports.tasks, "/api/tasks"), {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": machineKey },
      body: '{"title":"ship \\ud83d\\ude80"}'
    })
    assert.strictEqual(emoji.status, 201)
  }, 60_000)

  it("a path spelled in other case answers 404; other spellings of a path keep its rules (no-store, 8 KiB)", async () => {
    const authorize = (path: string, body: string) =>
      send(server.ports.hub, "POST", path, { "content-type": "application/json", "x-workspace-api-key": "x" }, body)
    const big = JSON.stringify({ token: "t".repeat(20_000) })

    const upper = await authorize("/API/V1/REGISTRY/decisions/AUTHORIZE", big)
    assert.strictEqual(upper.status, 404)
    assert.strictEqual(JSON.parse(upper.text).error.code, "NOT_FOUND")

    for (const path of [
      "/api/v1/registry/decisions/authorize",
      "//api/v1//registry/decisions/authorize/",
      "/api/v1/%72egistry/decisions/%61uthorize",
      "http://127.0.0.1/api/v1/registry/decisions/authorize"
    ]) {
      const answer = await authorize(path, big)
      assert.strictEqual(answer.status, 400, `${path}: ${answer.text}`)
      assert.strictEqual(answer.headers["cache-control"], "no-store", path)
      assert.strictEqual(JSON.parse(answer.text).error.code, "VALIDATION_ERROR", path)
    }
    for (const path of [
      "/api/v1/registry/decisions/authorize;x",
      "/api/v1/registry/decisions/../decisions/authorize",
      "/api/v1/registry/%2e%2e/registry/decisions/authorize",
      "/api/v1/registry/decisions%2Fx/authorize"
    ]) {
      const answer = await authorize(path, "{}")
      assert.strictEqual(answer.status, 404, `${path}: ${answer.text}`)
      assert.strictEqual(JSON.parse(answer.text).error.code, "NOT_FOUND", path)
    }
  }, 60_000)

  it("requests Node refuses (431 headers or URL too large, 400 malformed) answer with each service's error body", async () => {
    for (const [port, code] of [
      [server.ports.hub, "VALIDATION_ERROR"],
      [server.ports.decisions, "validation_error"]
    ] as const) {
      const longUrl = await raw(port, `GET /api/v1/health?${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`)
      assert.match(longUrl, /^HTTP\/1\.1 431 /)
      assert.strictEqual(JSON.parse(bodyOf(longUrl)).error.code, code)
      const bigHeader = await raw(
        port,
        `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(20_000)}\r\n\r\n`
      )
      assert.match(bigHeader, /^HTTP\/1\.1 431 /)
      assert.strictEqual(JSON.parse(bodyOf(bigHeader)).error.code, code)
      const malformed = await raw(port, "GARBAGE\r\n\r\n")
      assert.match(malformed, /^HTTP\/1\.1 400 /)
      assert.strictEqual(JSON.parse(bodyOf(malformed)).error.code, code)
      assert.notMatch(bodyOf(malformed), /HPE_|node|\/work\//i)
    }
    const tasks = await raw(server.ports.tasks, `GET /health?${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`)
    assert.match(tasks, /^HTTP\/1\.1 431 /)
    assert.isString(JSON.parse(bodyOf(tasks)).error)
    const tasksMalformed = await raw(server.ports.tasks, "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n")
    assert.match(tasksMalformed, /^HTTP\/1\.1 400 /)
    assert.isString(JSON.parse(bodyOf(tasksMalformed)).error)
  }, 60_000)
})

/** Every file and folder under a directory, with its permission bits. */
const modes = (dir: string): Array<[string, number, boolean]> => {
  const found: Array<[string, number, boolean]> = [[dir, statSync(dir).mode & 0o777, true]]
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name)
    if (entry.isFile() || entry.isDirectory()) found.push([path, statSync(path).mode & 0o777, entry.isDirectory()])
  }
  return found
}

describe("the embedded data directory (real processes)", () => {
  it("is this account's only: DATA_DIR and its folders 0700, every file 0600", () => {
    const found = modes(dataDir)
    assert.isAbove(found.filter(([, , dir]) => !dir).length, 10)
    for (const [path, mode, dir] of found) assert.strictEqual(mode, dir ? 0o700 : 0o600, path)
  })

  it("a second process on the same data (seed, another server) refuses to start naming the holder's pid", async () => {
    const seeded = await runSeed({ DATA_DIR: dataDir })
    assert.notStrictEqual(seeded.code, 0, seeded.output)
    // The seed says exactly what to do instead: stop the server, seed, start it again.
    assert.include(seeded.output, `The server (process ${server.child.pid}) has the embedded database under`)
    assert.include(
      seeded.output,
      "stop the server (Ctrl-C where it runs), run npm run seed again, then start the server again"
    )
    assert.notInclude(seeded.output, "    at ")

    const second = await startServer({ DATA_DIR: dataDir }, { waitReady: false })
    const code = await second.exited
    assert.notStrictEqual(code, 0)
    assert.include(second.output(), `in use by process ${server.child.pid}`)
    // The first server is untouched.
    assert.strictEqual((await fetch(url(server.ports.decisions, "/api/v1/ready"))).status, 200)
  }, 120_000)

  it("a lock left by a killed server does not block the next start", async () => {
    const dir = tempDataDir()
    const first = await startServer({ DATA_DIR: dir })
    await first.stop("SIGKILL")
    assert.isTrue(existsSync(join(dir, "pglite.lock")))
    const next = await startServer({ DATA_DIR: dir })
    try {
      assert.strictEqual((await fetch(url(next.ports.hub, "/api/v1/ready"))).status, 200)
      assert.include(readFileSync(join(dir, "pglite.lock"), "utf8"), String(next.child.pid))
    } finally {
      assert.strictEqual(await next.stop("SIGTERM"), 0)
    }
    assert.isFalse(existsSync(join(dir, "pglite.lock")))
  }, 120_000)
})
