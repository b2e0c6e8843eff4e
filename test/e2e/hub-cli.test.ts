import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtemp, readdir, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { verify } from "../../core/auth/IdentityToken.ts"
import { adminKey, issuer, serveAdmin } from "../support/HubAdmin.ts"

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs the CLI as `npm run cli` does, with the operator key in the environment and its own data directory. */
const cli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.acquireUseRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "hub-cli-"))),
    (dataDir) =>
      Effect.promise(
        () =>
          new Promise<Run>((resolve) => {
            const child = spawn(process.execPath, ["--import", "tsx", "apps/server/cli.ts", ...args], {
              cwd: process.cwd(),
              env: {
                PATH: process.env["PATH"],
                HOME: process.env["HOME"],
                DATA_DIR: dataDir,
                HUB_ADMIN_KEY: adminKey,
                ...env
              },
              stdio: ["ignore", "pipe", "pipe"]
            })
            let stdout = ""
            let stderr = ""
            child.stdout.on("data", (chunk) => (stdout += chunk))
            child.stderr.on("data", (chunk) => (stderr += chunk))
            child.once("exit", (code) => resolve({ code, stdout, stderr }))
          })
      ),
    (dataDir) => Effect.promise(() => rm(dataDir, { recursive: true, force: true }))
  )

describe("CLI against a served operator API", () => {
  it.live("creates an organization, refuses a duplicate user with the hub's message, and mints a token", () =>
    Effect.gen(function* () {
      const { baseUrl, registry } = yield* serveAdmin()
      const hub = ["--hub", baseUrl]
      const org = yield* cli(["org", "create", "--name", "Acme", "--tier", "monthly", ...hub])
      assert.strictEqual(org.code, 0, org.stderr)
      const created = JSON.parse(org.stdout)
      assert.deepInclude(created.org, { name: "Acme", tier: "monthly", status: "active" })

      assert.strictEqual(
        (yield* cli(["user", "create", "--email", "ada@example.com", "--name", "Ada", ...hub])).code,
        0
      )
      const again = yield* cli(["user", "create", "--email", "ADA@example.com", "--name", "Ada", ...hub])
      assert.strictEqual(again.code, 1)
      assert.strictEqual(again.stdout, "")
      assert.include(again.stderr, "A user with this email already exists.")

      yield* cli([
        "service",
        "register",
        "--id",
        "invoices",
        "--name",
        "Invoices",
        "--url",
        "https://invoices.example.com",
        ...hub
      ])
      yield* cli(["member", "add", "--org", created.org.id, "--email", "ada@example.com", "--role", "VIEWER", ...hub])
      const token = yield* cli([
        "token",
        "--service",
        "invoices",
        "--email",
        "ada@example.com",
        "--company",
        created.org.id,
        ...hub
      ])
      assert.strictEqual(token.code, 0, token.stderr)
      assert.match(token.stdout, /^[\w-]+\.[\w-]+\.[\w-]+\n$/)
      const key = (yield* registry.credentials("invoices"))!.credentials.embedKey
      const identity = yield* verify({
        token: token.stdout.trim(),
        key,
        issuer,
        audience: "invoices",
        nowSeconds: Math.floor(Date.now() / 1000)
      })
      assert.deepInclude(identity, { email: "ada@example.com", companyId: created.org.id, orgRole: "VIEWER" })

      const wrongKey = yield* cli(["service", "list", ...hub], { HUB_ADMIN_KEY: "not-the-key-0123456789" })
      assert.strictEqual(wrongKey.code, 1)
      assert.match(wrongKey.stderr, /\S/)
    })
  )

  it.live(
    "lists organizations, users, members and installations, and archives and suspends",
    () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serveAdmin()
        const hub = ["--hub", baseUrl]
        const ok = (run: Run) => {
          assert.strictEqual(run.code, 0, run.stderr)
          return JSON.parse(run.stdout)
        }
        const org = ok(yield* cli(["org", "create", "--name", "Listed", ...hub])).org
        ok(yield* cli(["user", "create", "--email", "bo@example.com", "--name", "Bo", ...hub]))
        ok(yield* cli(["member", "add", "--org", org.id, "--email", "bo@example.com", "--role", "ADMIN", ...hub]))

        const orgs = ok(yield* cli(["org", "list", ...hub]))
        assert.deepInclude(
          orgs.map((o: { id: string; status: string }) => ({ id: o.id, status: o.status })),
          { id: org.id, status: "active" }
        )
        const users = ok(yield* cli(["user", "list", ...hub]))
        assert.include(
          users.map((u: { email: string }) => u.email),
          "bo@example.com"
        )
        const members = ok(yield* cli(["member", "list", "--org", org.id, ...hub]))
        assert.deepStrictEqual(
          members.map((m: { email: string; role: string }) => [m.email, m.role]),
          [["bo@example.com", "ADMIN"]]
        )

        const archived = ok(yield* cli(["org", "archive", "--org", org.id, ...hub]))
        assert.strictEqual(archived.org.status, "archived")
        const listedAgain = ok(yield* cli(["org", "list", ...hub]))
        assert.strictEqual(listedAgain.find((o: { id: string }) => o.id === org.id).status, "archived")
        assert.strictEqual(ok(yield* cli(["org", "unarchive", "--org", org.id, ...hub])).org.status, "active")

        ok(yield* cli(["member", "remove", "--org", org.id, "--email", "bo@example.com", ...hub]))
        assert.deepStrictEqual(ok(yield* cli(["member", "list", "--org", org.id, ...hub])), [])

        ok(
          yield* cli([
            "service",
            "register",
            "--id",
            "ledger",
            "--name",
            "Ledger",
            "--url",
            "https://l.example.com",
            ...hub
          ])
        )
        const suspended = ok(yield* cli(["service", "suspend", "--id", "ledger", ...hub]))
        assert.strictEqual(suspended.service.status, "suspended")
        assert.deepStrictEqual(ok(yield* cli(["install", "list", "--org", org.id, ...hub])), [])

        const missing = yield* cli(["member", "list", "--org", "org_nope", ...hub])
        assert.strictEqual(missing.code, 1)
        assert.include(missing.stderr, "No such organization.")
      }),
    // Fifteen runs of the CLI, each a process of its own.
    180_000
  )

  it.live("secrets generate prints a fresh environment file and writes nothing", () =>
    Effect.gen(function* () {
      const dataDir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "hub-cli-secrets-")))
      const first = yield* cli(["secrets", "generate"], { DATA_DIR: dataDir })
      const second = yield* cli(["secrets", "generate"], { DATA_DIR: dataDir })
      assert.strictEqual(first.code, 0, first.stderr)
      assert.match(first.stdout, /^HUB_ADMIN_KEY=[A-Za-z0-9_-]{43}$/m)
      assert.match(first.stdout, /^HUB_OIDC_SIGNING_KEY=-----BEGIN PRIVATE KEY-----\\n\S+/m)
      assert.notStrictEqual(first.stdout, second.stdout)
      assert.deepStrictEqual(yield* Effect.promise(() => readdir(dataDir)), [])
      yield* Effect.promise(() => rm(dataDir, { recursive: true, force: true }))
    })
  )
})
