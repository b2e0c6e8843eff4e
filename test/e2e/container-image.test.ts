import { spawn } from "node:child_process"
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statfsSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { basename, dirname, join, relative } from "node:path"
import { afterAll, assert, describe, it } from "vitest"
import { parse } from "yaml"
import { Tables } from "../../core/tasks/RecordStore.ts"
import { freePort } from "../support/ServerProcess.ts"

/**
 * The container image and the compose file, checked without a container engine: the Dockerfile's steps are
 * replayed from a clean copy of the repository (each stage in a directory of its own standing for its
 * WORKDIR), the runtime stage's command starts the server with the stage's environment, and compose.yaml
 * names only settings the server reads.
 */

const root = process.cwd()
/**
 * The two stages hold about 800 MB in some 30,000 files, which a disk can take half a minute to delete: in
 * memory (/dev/shm) when it has room to spare, else in the temporary directory.
 */
const roomy = (dir: string) => {
  try {
    const stats = statfsSync(dir)
    return stats.bavail * stats.bsize > 4 * 1024 ** 3
  } catch {
    return false
  }
}
const scratch = mkdtempSync(join(roomy("/dev/shm") ? "/dev/shm" : tmpdir(), "hitl-image-"))
afterAll(() => rm(scratch, { recursive: true, force: true }), 120_000)

interface Instruction {
  readonly keyword: string
  readonly args: string
}

/** The Dockerfile's instructions: continued lines joined, comments and blank lines left out. */
const instructions = (text: string): ReadonlyArray<Instruction> =>
  text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const [keyword, ...rest] = line.split(/\s+/)
      return { keyword: keyword!.toUpperCase(), args: rest.join(" ") }
    })

/** `--name=value` flags at the start of an instruction's arguments, and what follows them. */
const flagsOf = (args: string) => {
  const flags = new Map<string, string>()
  let rest = args
  for (let match = /^--([a-z]+)=(\S+)\s+/.exec(rest); match !== null; match = /^--([a-z]+)=(\S+)\s+/.exec(rest)) {
    flags.set(match[1]!, match[2]!)
    rest = rest.slice(match[0].length)
  }
  return { flags, rest }
}

/** `K=V K2=V2` (values without spaces, as the Dockerfile writes them). */
const envPairs = (args: string): Array<[string, string]> =>
  args.split(/\s+/).map((pair) => {
    const at = pair.indexOf("=")
    assert.isAbove(at, 0, `ENV ${pair} is not NAME=value`)
    return [pair.slice(0, at), pair.slice(at + 1)]
  })

const run = (command: string, args: ReadonlyArray<string>, cwd: string, env: Record<string, string | undefined>) =>
  new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    child.once("error", reject)
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(" ")} exited ${code}:\n${output}`))
    )
  })

const exitCode = (command: string, args: ReadonlyArray<string>, cwd: string, env: Record<string, string>) =>
  new Promise<number | null>((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: "ignore" })
    child.once("exit", resolve)
  })

interface Stage {
  readonly name: string
  readonly dir: string
  workdir: string
  readonly env: Record<string, string>
  user: string
  readonly volumes: Array<string>
  readonly exposed: Array<string>
  healthcheck: ReadonlyArray<string>
  command: ReadonlyArray<string>
}

/**
 * The clean copy: the files git tracks, as they are in the work tree (so uncommitted edits are replayed too),
 * and nothing else. Read-only for the repository: no git command here writes its index or its objects, so the
 * copy is made the same way while other tests run.
 */
const cleanCopy = async () => {
  const context = join(scratch, "context")
  mkdirSync(context)
  const tracked = await new Promise<Array<string>>((resolve, reject) => {
    const child = spawn("git", ["ls-files", "-z"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let errors = ""
    child.stdout.on("data", (chunk) => (out += chunk))
    child.stderr.on("data", (chunk) => (errors += chunk))
    child.once("exit", (code) =>
      code === 0 ? resolve(out.split("\0").filter(Boolean)) : reject(new Error(`git ls-files: ${errors}`))
    )
  })
  for (const path of tracked) {
    // A tracked file deleted in the work tree is not part of the copy.
    if (!existsSync(join(root, path))) continue
    mkdirSync(dirname(join(context, path)), { recursive: true })
    copyFileSync(join(root, path), join(context, path))
  }
  return context
}

/** Replays the Dockerfile: each stage's RUN steps in its directory, its COPY steps between the directories. */
const replay = async (dockerfile: ReadonlyArray<Instruction>, context: string) => {
  const stages: Array<Stage> = []
  const current = () => stages.at(-1)!
  /** A path in a stage's file system, in the directory standing for it (paths outside WORKDIR are refused). */
  const inStage = (stage: Stage, path: string) => {
    if (!path.startsWith("/")) return join(stage.dir, path)
    assert.isTrue(path === stage.workdir || path.startsWith(`${stage.workdir}/`), `${path} is outside WORKDIR`)
    return join(stage.dir, relative(stage.workdir, path))
  }
  const mapped = (stage: Stage, value: string) => (value.startsWith("/") ? inStage(stage, value) : value)
  for (const { keyword, args } of dockerfile) {
    switch (keyword) {
      case "FROM": {
        const [image, as, name] = args.split(/\s+/)
        assert.match(image!, /^node:\d+(-[a-z]+)*-slim$/, "a slim Node image")
        assert.strictEqual(as?.toUpperCase(), "AS", "every stage is named")
        const dir = join(scratch, name!)
        mkdirSync(dir)
        stages.push({
          name: name!,
          dir,
          workdir: "/",
          env: {},
          user: "root",
          volumes: [],
          exposed: [],
          healthcheck: [],
          command: []
        })
        break
      }
      case "WORKDIR":
        current().workdir = args
        break
      case "ENV":
        for (const [name, value] of envPairs(args)) current().env[name] = value
        break
      case "COPY": {
        const { flags, rest } = flagsOf(args)
        const paths = rest.split(/\s+/)
        const destination = inStage(current(), paths.pop()!)
        const from = flags.get("from")
        const source = from === undefined ? undefined : stages.find((stage) => stage.name === from)
        if (from !== undefined) assert.isDefined(source, `COPY --from=${from}: no such stage`)
        for (const path of paths) {
          const at = source === undefined ? join(context, path) : inStage(source, path)
          assert.isTrue(existsSync(at), `COPY ${path}: not there`)
          const target = path === "." || paths.length === 1 ? destination : join(destination, basename(path))
          cpSync(at, target, { recursive: true })
        }
        break
      }
      case "RUN": {
        const { rest } = flagsOf(args)
        const stage = current()
        const env = Object.fromEntries(Object.entries(stage.env).map(([name, value]) => [name, mapped(stage, value)]))
        await run("sh", ["-c", rest], stage.dir, {
          PATH: process.env["PATH"],
          HOME: process.env["HOME"],
          // The installs may take packages from this machine's npm cache (the image's build fetches them).
          npm_config_prefer_offline: "true",
          npm_config_update_notifier: "false",
          ...env
        })
        break
      }
      case "USER":
        current().user = args
        break
      case "VOLUME":
        current().volumes.push(...(JSON.parse(args) as Array<string>))
        break
      case "EXPOSE":
        current().exposed.push(...args.split(/\s+/))
        break
      case "HEALTHCHECK": {
        const at = args.indexOf("CMD ")
        current().healthcheck = JSON.parse(args.slice(at + 4)) as Array<string>
        break
      }
      case "CMD":
        current().command = JSON.parse(args) as Array<string>
        break
      case "STOPSIGNAL":
        assert.strictEqual(args, "SIGTERM")
        break
      default:
        assert.fail(`the replay does not know ${keyword}`)
    }
  }
  return stages
}

const health = (port: number) =>
  fetch(`http://127.0.0.1:${port}/api/v1/health`, { signal: AbortSignal.timeout(2_000) }).then(
    (response) => response.status,
    () => 0
  )

describe("the container image (Dockerfile), replayed from a clean copy", () => {
  it("builds the bundle, installs production dependencies only, runs as a non-root user and starts healthy", async () => {
    const dockerfile = instructions(readFileSync(join(root, "Dockerfile"), "utf8"))
    const stages = await replay(dockerfile, await cleanCopy())
    assert.deepStrictEqual(
      stages.map((stage) => stage.name),
      ["build", "runtime"]
    )
    const runtime = stages[1]!
    assert.notInclude(["root", "0", ""], runtime.user, "the runtime runs as a non-root user")
    assert.strictEqual(runtime.env["NODE_ENV"], "production")
    assert.include(runtime.volumes, runtime.env["DATA_DIR"], "DATA_DIR is a volume")
    assert.sameMembers(
      runtime.exposed,
      ["HUB_PORT", "DECISIONS_PORT", "TASKS_PORT"].map((name) => runtime.env[name])
    )
    // Production dependencies only: no compiler, so the server runs the bundle the build stage made.
    for (const tool of ["esbuild", "typescript", "tsx", "vite", "vitest"]) {
      assert.isFalse(existsSync(join(runtime.dir, "node_modules", tool)), `${tool} is in the runtime`)
    }

    const ports = { HUB_PORT: await freePort(), DECISIONS_PORT: await freePort(), TASKS_PORT: await freePort() }
    const env = {
      PATH: process.env["PATH"],
      ...Object.fromEntries(
        Object.entries(runtime.env).map(([name, value]) => [
          name,
          value.startsWith("/") ? join(runtime.dir, relative(runtime.workdir, value)) : value
        ])
      ),
      // The image listens on every address; here, on loopback only.
      HOST: "127.0.0.1",
      ...Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, String(port)]))
    } as Record<string, string>
    const [command, ...args] = runtime.command
    const server = spawn(command!, args, { cwd: runtime.dir, env, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    server.stdout.on("data", (chunk) => (output += chunk))
    server.stderr.on("data", (chunk) => (output += chunk))
    const exited = new Promise<number | null>((resolve) => server.once("exit", resolve))
    try {
      const deadline = Date.now() + 60_000
      for (const port of Object.values(ports)) {
        while ((await health(port)) !== 200) {
          assert.isNull(server.exitCode, `the server exited:\n${output}`)
          assert.isBelow(Date.now(), deadline, `no health on ${port}:\n${output}`)
          await new Promise((resolve) => setTimeout(resolve, 200))
        }
      }
      assert.notInclude(output, "Compiling the server", "the runtime compiled nothing")
      const [check, ...checkArgs] = runtime.healthcheck
      assert.strictEqual(await exitCode(check!, checkArgs, runtime.dir, env), 0, "HEALTHCHECK passes")
    } finally {
      if (server.exitCode === null) server.kill("SIGTERM")
    }
    assert.strictEqual(await exited, 0, output)
    const [check, ...checkArgs] = runtime.healthcheck
    assert.strictEqual(await exitCode(check!, checkArgs, runtime.dir, env), 1, "HEALTHCHECK fails once stopped")
  }, 240_000)

  it("leaves out of the build context only what is never committed (.dockerignore)", async () => {
    const patterns = readFileSync(join(root, ".dockerignore"), "utf8")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#"))
    const tracked = await new Promise<Array<string>>((resolve, reject) => {
      const child = spawn("git", ["ls-files"], { cwd: root, stdio: ["ignore", "pipe", "ignore"] })
      let out = ""
      child.stdout.on("data", (chunk) => (out += chunk))
      child.once("exit", (code) => (code === 0 ? resolve(out.split("\n").filter(Boolean)) : reject(new Error("git"))))
    })
    for (const pattern of patterns) {
      const expression = new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}(/.*)?$`)
      assert.deepStrictEqual(
        tracked.filter((path) => expression.test(path)),
        [],
        `.dockerignore ${pattern} leaves out committed files`
      )
    }
  })
})

/** Every setting the server reads: the names apps/server/Config.ts passes to its Config readers. */
const acceptedSettings = () => {
  const source = readFileSync(join(root, "apps", "server", "Config.ts"), "utf8")
  const names = new Set([...source.matchAll(/"([A-Z][A-Z0-9_]+)"/g)].map((match) => match[1]!))
  for (const table of Tables) names.add(`AIRTABLE_TABLE_${table.toUpperCase()}`)
  return names
}

describe("compose.yaml", () => {
  const compose = parse(readFileSync(join(root, "compose.yaml"), "utf8"), { merge: true }) as {
    services: Record<string, Record<string, any>>
  }
  const services = Object.entries(compose.services)
  const platform = services.filter(([, service]) => service["build"] !== undefined)

  it("runs Postgres, Redis, the hub, two decisions instances and one task inbox instance from the image", () => {
    assert.sameMembers(
      platform.map(([name]) => name),
      ["hub", "decisions-1", "decisions-2", "tasks"]
    )
    assert.match(compose.services["postgres"]!["image"], /^postgres:/)
    assert.match(compose.services["redis"]!["image"], /^redis:/)
  })

  it("names only settings the server reads", () => {
    const accepted = acceptedSettings()
    for (const [name, service] of platform) {
      const unknown = Object.keys(service["environment"] ?? {}).filter((setting) => !accepted.has(setting))
      assert.deepStrictEqual(unknown, [], `${name} sets what the server does not read`)
    }
  })

  it("gives every instance the same database, Redis, secrets and peers", () => {
    const shared = (service: Record<string, any>) =>
      JSON.stringify([
        service["env_file"],
        ...["DATABASE_URL", "REDIS_URL", "HUB_URL", "DECISIONS_URL", "TASKS_URL"].map(
          (name) => service["environment"][name]
        )
      ])
    const first = shared(platform[0]![1])
    for (const [name, service] of platform) assert.strictEqual(shared(service), first, name)
    assert.match(platform[0]![1]["environment"]["DATABASE_URL"], /^postgres:\/\/.*@postgres:5432\//)
    assert.match(platform[0]![1]["environment"]["REDIS_URL"], /^redis:\/\/redis:6379/)
  })

  it("publishes the three services' ports and nothing else", () => {
    const published = services.flatMap(([, service]) => (service["ports"] ?? []) as Array<string>)
    assert.sameMembers(published, ["4000:4000", "4001:4001", "4002:4002"])
  })
})
