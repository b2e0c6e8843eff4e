import { assert, describe, it } from "@effect/vitest"
import { outcomeOf, parseCommand } from "../../apps/server/CliCommands.ts"

describe("CLI argument handling", () => {
  it("turns each operator command into one call of the operator API", () => {
    assert.deepStrictEqual(parseCommand(["org", "create", "--name", "Acme", "--hub", "https://hub.test"]), {
      hub: "https://hub.test",
      command: { _tag: "ApiCall", method: "POST", path: "/api/v1/admin/orgs", body: { name: "Acme" }, print: "data" }
    })
    assert.deepInclude(
      parseCommand(["member", "add", "--org", "org/x", "--email", "a@b.co", "--role", "ADMIN"]).command,
      {
        path: "/api/v1/admin/orgs/org%2Fx/members",
        body: { email: "a@b.co", role: "ADMIN" }
      }
    )
    assert.deepInclude(
      parseCommand(["service", "register", "--id", "inv", "--name", "Inv", "--url", "https://x.y"]).command,
      {
        body: { id: "inv", displayName: "Inv", baseUrl: "https://x.y" }
      }
    )
    assert.deepInclude(parseCommand(["service", "list"]).command, { method: "GET", path: "/api/v1/admin/services" })
    assert.deepInclude(parseCommand(["service", "promote", "--id", "inv"]).command, {
      path: "/api/v1/admin/services/inv/promote"
    })
    assert.deepInclude(parseCommand(["install", "--org", "o1", "--service", "inv", "--consents", "embed"]).command, {
      method: "PUT",
      path: "/api/v1/admin/orgs/o1/installations/inv",
      body: { consents: { companyId: false, accessClaims: false, embed: true }, permissions: [] }
    })
    assert.deepInclude(
      parseCommand(["flag", "set", "--name", "access-claims", "--enabled", "false", "--org", "o1"]).command,
      {
        path: "/api/v1/admin/flags/access-claims",
        body: { enabled: false, orgId: "o1" }
      }
    )
  })

  it("mints tokens locally only when asked to, or when a role is chosen", () => {
    assert.deepStrictEqual(
      parseCommand(["token", "--service", "inv", "--email", "a@b.co", "--company", "o1"]).command,
      {
        _tag: "Token",
        service: "inv",
        email: "a@b.co",
        company: "o1",
        role: undefined,
        local: false
      }
    )
    assert.deepInclude(
      parseCommand(["token", "--service", "decisions", "--email", "a@b.co", "--role", "ADMIN"]).command,
      {
        local: true
      }
    )
  })

  it("answers usage errors for missing options, unknown commands and options, and bad values", () => {
    const message = (argv: Array<string>) => {
      const { command } = parseCommand(argv)
      return command._tag === "UsageError" ? command.message : undefined
    }
    assert.strictEqual(message([]), "Name a command.")
    assert.strictEqual(message(["org", "create"]), "--name is required.")
    assert.strictEqual(message(["member", "add", "--org", "o1", "--email", "a@b.co"]), "--role is required.")
    assert.strictEqual(message(["org", "destroy"]), 'Unknown command "org destroy".')
    assert.strictEqual(message(["constructor"]), 'Unknown command "constructor".')
    assert.isString(message(["service", "list", "--bogus"]))
    assert.strictEqual(
      message(["flag", "set", "--name", "access-claims", "--enabled", "yes"]),
      "--enabled must be true or false."
    )
    assert.match(message(["install", "--org", "o", "--service", "s", "--consents", "everything"])!, /--consents/)
  })

  it("prints data on success, the token alone for tokens, and the envelope's message on failure", () => {
    const hub = "https://hub.test"
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
    assert.deepStrictEqual(outcomeOf(hub, { _tag: "Unreachable" }, "data"), {
      stderr: "Could not reach the hub at https://hub.test.\n",
      exitCode: 1
    })
  })
})
