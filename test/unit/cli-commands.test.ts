import { assert, describe, it } from "@effect/vitest"
import { NodeServices } from "@effect/platform-node"
import { Cause, Effect, Layer, Option } from "effect"
import { Command } from "effect/cli"
import { checkHub, outcomeOf, type ApiCall, type TokenRequest } from "../../apps/server/CliCommands.ts"
import { cli, CliFailure, Operator } from "../../apps/server/CliProgram.ts"
import { SecretNames, secretMinLength } from "../../apps/server/Config.ts"
import { productionSecretsFile } from "../../apps/server/DevSecrets.ts"
import { createPrivateKey } from "node:crypto"

type Sent = { readonly hub: string | undefined; readonly call: ApiCall | TokenRequest }

/** Runs the CLI's command tree on `argv` with an operator that records what would be sent. */
const run = (argv: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sent: Array<Sent> = []
    const record = (hub: Option.Option<string>, call: ApiCall | TokenRequest) =>
      Effect.sync(() => void sent.push({ hub: Option.getOrUndefined(hub), call }))
    const operator = Layer.succeed(Operator, { call: record, token: record })
    const exit = yield* Command.runWith(cli, { version: "test", renderErrors: false })(argv).pipe(
      Effect.provide([operator, NodeServices.layer]),
      Effect.exit
    )
    return { sent, exit }
  })

const sentBy = (argv: ReadonlyArray<string>) =>
  run(argv).pipe(
    Effect.map(({ sent, exit }) => {
      assert.strictEqual(exit._tag, "Success", argv.join(" "))
      assert.strictEqual(sent.length, 1)
      return sent[0]!
    })
  )

const refused = (argv: ReadonlyArray<string>) =>
  run(argv).pipe(
    Effect.map(({ sent, exit }) => {
      assert.strictEqual(exit._tag, "Failure", argv.join(" "))
      assert.strictEqual(sent.length, 0, argv.join(" "))
      return exit
    })
  )

describe("CLI argument handling", () => {
  it.effect("turns each operator command into one call of the operator API", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* sentBy(["org", "create", "--name", "Acme", "--hub", "https://hub.test"]), {
        hub: "https://hub.test",
        call: { _tag: "ApiCall", method: "POST", path: "/api/v1/admin/orgs", body: { name: "Acme" }, print: "data" }
      })
      assert.deepInclude((yield* sentBy(["org", "update", "--org", "org_1", "--archived", "true"])).call, {
        method: "PATCH",
        path: "/api/v1/admin/orgs/org_1",
        body: { archived: true }
      })
      assert.deepInclude((yield* sentBy(["org", "update", "--org", "org_1", "--tier", "hourly"])).call, {
        body: { tier: "hourly" }
      })
      assert.deepInclude(
        (yield* sentBy(["member", "add", "--org", "org/x", "--email", "a@b.co", "--role", "ADMIN"])).call,
        { path: "/api/v1/admin/orgs/org%2Fx/members", body: { email: "a@b.co", role: "ADMIN" } }
      )
      assert.deepInclude(
        (yield* sentBy(["service", "register", "--id", "inv", "--name", "Inv", "--url", "https://x.y"])).call,
        { body: { id: "inv", displayName: "Inv", baseUrl: "https://x.y" } }
      )
      assert.deepInclude((yield* sentBy(["service", "list"])).call, { method: "GET", path: "/api/v1/admin/services" })
      assert.deepInclude((yield* sentBy(["service", "promote", "--id", "inv"])).call, {
        path: "/api/v1/admin/services/inv/promote"
      })
      assert.deepInclude(
        (yield* sentBy(["install", "add", "--org", "o1", "--service", "inv", "--consents", "embed"])).call,
        {
          method: "PUT",
          path: "/api/v1/admin/orgs/o1/installations/inv",
          body: { consents: { companyId: false, accessClaims: false, embed: true }, permissions: [] }
        }
      )
      assert.deepInclude(
        (yield* sentBy(["flag", "set", "--name", "access-claims", "--enabled", "false", "--org", "o1"])).call,
        { path: "/api/v1/admin/flags/access-claims", body: { enabled: false, orgId: "o1" } }
      )
    })
  )

  it.effect("lists and disables organizations, users, members, services and installations", () =>
    Effect.gen(function* () {
      const get = (path: string, field: string) => ({ method: "GET" as const, path, print: { field } })
      assert.deepInclude((yield* sentBy(["org", "list"])).call, get("/api/v1/admin/orgs", "orgs"))
      assert.deepInclude((yield* sentBy(["user", "list"])).call, get("/api/v1/admin/users", "users"))
      assert.deepInclude(
        (yield* sentBy(["member", "list", "--org", "o/1"])).call,
        get("/api/v1/admin/orgs/o%2F1", "members")
      )
      assert.deepInclude(
        (yield* sentBy(["install", "list", "--org", "o1"])).call,
        get("/api/v1/admin/orgs/o1", "installations")
      )
      assert.deepInclude((yield* sentBy(["org", "archive", "--org", "o1"])).call, {
        method: "PATCH",
        path: "/api/v1/admin/orgs/o1",
        body: { archived: true }
      })
      assert.deepInclude((yield* sentBy(["org", "unarchive", "--org", "o1"])).call, {
        method: "PATCH",
        path: "/api/v1/admin/orgs/o1",
        body: { archived: false }
      })
      assert.deepInclude((yield* sentBy(["member", "remove", "--org", "o1", "--email", "a+b@c.co"])).call, {
        method: "DELETE",
        path: "/api/v1/admin/orgs/o1/members/a%2Bb%40c.co"
      })
      assert.deepInclude((yield* sentBy(["service", "suspend", "--id", "inv"])).call, {
        method: "POST",
        path: "/api/v1/admin/services/inv/suspend"
      })
      assert.deepInclude((yield* sentBy(["install", "remove", "--org", "o1", "--service", "inv"])).call, {
        method: "DELETE",
        path: "/api/v1/admin/orgs/o1/installations/inv"
      })
    })
  )

  it.effect("mints tokens locally only when asked to, or when a role is chosen", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(
        (yield* sentBy(["token", "--service", "inv", "--email", "a@b.co", "--company", "o1"])).call,
        { _tag: "Token", service: "inv", email: "a@b.co", company: "o1", role: undefined, local: false }
      )
      assert.deepInclude(
        (yield* sentBy(["token", "--service", "decisions", "--email", "a@b.co", "--role", "ADMIN"])).call,
        { local: true }
      )
    })
  )

  it.effect("refuses missing flags, unknown commands and flags, and bad values before sending anything", () =>
    Effect.gen(function* () {
      yield* refused(["org", "create"])
      yield* refused(["member", "add", "--org", "o1", "--email", "a@b.co"])
      yield* refused(["org", "destroy"])
      yield* refused(["constructor"])
      yield* refused(["service", "list", "--bogus"])
      yield* refused(["flag", "set", "--name", "access-claims", "--enabled", "yes"])
      yield* refused(["member", "add", "--org", "o1", "--email", "a@b.co", "--role", "BOSS"])
      yield* refused(["member", "list"])
      const consents = yield* refused(["install", "add", "--org", "o", "--service", "s", "--consents", "everything"])
      assert.strictEqual(consents._tag, "Failure")
      const failure = consents._tag === "Failure" ? Cause.squash(consents.cause) : undefined
      assert.instanceOf(failure, CliFailure)
      assert.match((failure as CliFailure).text, /--consents/)
    })
  )

  it.effect("answers --help for the CLI and for every command without sending anything", () =>
    Effect.gen(function* () {
      for (const argv of [
        ["--help"],
        ["org", "create", "--help"],
        ["token", "--help"],
        ["service", "--help"],
        ["install", "--help"],
        ["secrets", "generate", "--help"]
      ]) {
        const { sent, exit } = yield* run(argv)
        assert.strictEqual(exit._tag, "Success", argv.join(" "))
        assert.strictEqual(sent.length, 0)
      }
    })
  )

  it("sends the admin key only over https, or plain http on this machine", () => {
    for (const hub of ["http://hub.example.com", "ftp://127.0.0.1", "https://op:pw@hub.example.com", "hub"]) {
      assert.isString(checkHub(hub), hub)
    }
    for (const hub of ["https://hub.example.com", "http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:1"]) {
      assert.isUndefined(checkHub(hub), hub)
    }
  })

  it("prints data on success, the token alone for tokens, and the envelope's message on failure", () => {
    const hub = "https://hub.test"
    assert.deepStrictEqual(
      outcomeOf(
        hub,
        { _tag: "Answered", status: 200, body: { data: { org: {}, members: [{ a: 1 }] } } },
        {
          field: "members"
        }
      ),
      { stdout: `${JSON.stringify([{ a: 1 }], null, 2)}\n`, exitCode: 0 }
    )
    assert.deepStrictEqual(
      outcomeOf(hub, { _tag: "Answered", status: 201, body: { data: { org: { id: "o1" } } } }, "data"),
      {
        stdout: `${JSON.stringify({ org: { id: "o1" } }, null, 2)}\n`,
        exitCode: 0
      }
    )
    assert.deepStrictEqual(
      outcomeOf(hub, { _tag: "Answered", status: 200, body: { data: { token: "t.t.t" } } }, "token"),
      {
        stdout: "t.t.t\n",
        exitCode: 0
      }
    )
    assert.deepStrictEqual(
      outcomeOf(
        hub,
        { _tag: "Answered", status: 409, body: { error: { code: "CONFLICT", message: "Taken." } } },
        "data"
      ),
      { stderr: "Taken.\n", exitCode: 1 }
    )
    assert.deepStrictEqual(
      outcomeOf(
        hub,
        {
          _tag: "Answered",
          status: 400,
          body: {
            error: {
              code: "VALIDATION_ERROR",
              message: "Invalid.",
              details: [
                { in: "body", field: "name", message: "is empty" },
                { in: "header", field: "Idempotency-Key", message: "is required" }
              ]
            }
          }
        },
        "data"
      ),
      { stderr: "Invalid.\n  name: is empty\n  header Idempotency-Key: is required\n", exitCode: 1 }
    )
    assert.deepStrictEqual(
      outcomeOf(
        hub,
        {
          _tag: "Answered",
          status: 400,
          body: {
            error: {
              code: "VALIDATION_ERROR",
              message: "The request body could not be read.",
              details: [{ in: "body", field: "", message: "The request body could not be read." }]
            }
          }
        },
        "data"
      ),
      { stderr: "The request body could not be read.\n", exitCode: 1 }
    )
    assert.deepStrictEqual(outcomeOf(hub, { _tag: "Unreachable" }, "data"), {
      stderr: "Could not reach the hub at https://hub.test.\n",
      exitCode: 1
    })
  })
})

describe("secrets generate", () => {
  it("makes every secret setting, fresh each time, as one line each of an environment file", () => {
    const parse = (text: string) =>
      new Map(
        text
          .split("\n")
          .filter((line) => line !== "" && !line.startsWith("#"))
          .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)] as const)
      )
    const first = parse(productionSecretsFile())
    const second = parse(productionSecretsFile())
    assert.deepStrictEqual([...first.keys()], [...SecretNames, "HUB_OIDC_SIGNING_KEY"])
    for (const [name, value] of first) {
      assert.notStrictEqual(value, second.get(name), name)
      assert.notMatch(value, /[\r\n]/, name)
      if (name !== "HUB_OIDC_SIGNING_KEY") {
        assert.notMatch(value, /\s/, name)
        assert.isAtLeast(value.length, secretMinLength, name)
      }
    }
    // The PEM key on one line: its line breaks written \n, read back by the server as a usable key.
    const pem = first.get("HUB_OIDC_SIGNING_KEY")!.replace(/\\n/g, "\n")
    assert.strictEqual(createPrivateKey(pem).asymmetricKeyType, "ec")
  })
})
