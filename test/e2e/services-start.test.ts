import { Option, Redacted } from "effect"
import { readFileSync } from "node:fs"
import { parse } from "yaml"
import { afterEach, assert, describe, it } from "vitest"
import { checkServices, runningServices } from "../../apps/server/StartChecks.ts"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"

/**
 * SERVICES chooses the services a process runs. A start that names an unknown service, runs one without a
 * peer it calls and without that peer's URL, or asks the embedded database for fewer than all three, stops
 * with one sentence naming the setting: exit 1, no stack, nothing listening.
 */

const running: Array<RunningServer> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
})

const postgres = Option.some(Redacted.make("postgres://postgres@127.0.0.1:5432/test"))
const peer = Option.some("http://peer.example:4000/")
const settings = (services: ReadonlyArray<string>, overrides: Partial<Parameters<typeof checkServices>[0]> = {}) => ({
  services,
  databaseUrl: postgres,
  hubUrl: Option.none<string>(),
  decisionsUrl: Option.none<string>(),
  tasksUrl: Option.none<string>(),
  ...overrides
})

describe("which services a process runs (SERVICES)", () => {
  it("runs all three by default, and any one or two of them with the peers' URLs", () => {
    assert.strictEqual(
      checkServices(settings(["hub", "decisions", "tasks"], { databaseUrl: Option.none() })),
      undefined
    )
    assert.strictEqual(checkServices(settings(["decisions"], { hubUrl: peer })), undefined)
    assert.strictEqual(checkServices(settings(["tasks"], { hubUrl: peer })), undefined)
    assert.strictEqual(checkServices(settings(["hub"], { decisionsUrl: peer, tasksUrl: peer })), undefined)
    assert.strictEqual(checkServices(settings(["hub", "decisions"], { tasksUrl: peer })), undefined)
    assert.strictEqual(checkServices(settings(["decisions", "tasks"], { hubUrl: peer })), undefined)
    assert.deepStrictEqual([...runningServices({ services: ["tasks", "hub"] })], ["hub", "tasks"])
  })

  it("refuses an unknown name, no name, a missing peer and the embedded database asked for fewer, naming each", () => {
    assert.strictEqual(
      checkServices(settings(["decisions", "inbox"], { hubUrl: peer })),
      'SERVICES names "inbox", which is not a service: name hub, decisions or tasks, comma-separated.'
    )
    assert.strictEqual(
      checkServices(settings([])),
      "SERVICES names no service: name hub, decisions or tasks, comma-separated."
    )
    assert.strictEqual(
      checkServices(settings(["decisions"])),
      "SERVICES=decisions runs decisions without hub: set HUB_URL to where hub is reached."
    )
    assert.strictEqual(
      checkServices(settings(["hub"], { decisionsUrl: peer })),
      "SERVICES=hub runs hub without tasks: set TASKS_URL to where tasks is reached."
    )
    assert.strictEqual(
      checkServices(settings(["hub", "tasks"])),
      "SERVICES=hub,tasks runs hub without decisions: set DECISIONS_URL to where decisions is reached."
    )
    assert.strictEqual(
      checkServices(settings(["decisions"], { hubUrl: peer, databaseUrl: Option.none() })),
      "The embedded database serves all three services in one process: to run SERVICES=decisions alone, set DATABASE_URL to a Postgres server every instance shares."
    )
  })

  it("a real start with a bad SERVICES stops with its sentence alone and exit 1", async () => {
    for (const [env, sentence] of [
      [{ SERVICES: "hub,search" }, 'SERVICES names "search", which is not a service'],
      [{ SERVICES: "decisions" }, "The embedded database serves all three services in one process"],
      [
        { SERVICES: "decisions", DATABASE_URL: "postgres://postgres@127.0.0.1:5432/test" },
        "SERVICES=decisions runs decisions without hub: set HUB_URL"
      ]
    ] as const) {
      const server = await startServer({ DATA_DIR: tempDataDir(), ...env }, { waitReady: false })
      running.push(server)
      assert.strictEqual(await server.exited, 1, server.output())
      const lines = server
        .output()
        .split("\n")
        .filter((line) => line !== "" && !line.startsWith("oidc-provider WARNING"))
      assert.lengthOf(lines, 1, server.output())
      assert.include(lines[0], sentence)
      assert.notInclude(server.output(), "    at ")
    }
  }, 240_000)

  it("compose.yaml runs one service per instance: the hub, two decisions instances and one task inbox", () => {
    const compose = parse(readFileSync("compose.yaml", "utf8"), { merge: true }) as {
      services: Record<string, { build?: unknown; environment?: Record<string, string> }>
    }
    const instances = Object.entries(compose.services).filter(([, service]) => service.build !== undefined)
    const runs = instances.map(([name, service]) => [name, service.environment?.["SERVICES"]])
    assert.sameDeepMembers(runs, [
      ["hub", "hub"],
      ["decisions-1", "decisions"],
      ["decisions-2", "decisions"],
      ["tasks", "tasks"]
    ])
    for (const [name, service] of instances) {
      const environment = service.environment ?? {}
      const url = (setting: string) => Option.fromNullishOr(environment[setting])
      const refused = checkServices({
        services: (environment["SERVICES"] ?? "").split(","),
        databaseUrl: Option.map(url("DATABASE_URL"), Redacted.make),
        hubUrl: url("HUB_URL"),
        decisionsUrl: url("DECISIONS_URL"),
        tasksUrl: url("TASKS_URL")
      })
      assert.isUndefined(refused, name)
    }
  })
})
