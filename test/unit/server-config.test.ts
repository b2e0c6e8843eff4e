import { ConfigProvider, Effect, Option, Redacted } from "effect"
import { assert, describe, it } from "vitest"
import { ServerConfig } from "../../apps/server/Config.ts"

const load = (env: Record<string, string>) =>
  Effect.runPromise(
    Effect.result(
      Effect.gen(function* () {
        return yield* ServerConfig
      }).pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))))
    )
  )

describe("ServerConfig", () => {
  it("takes a secret of 16 characters or more, and refuses a short or blank one by name without its value", async () => {
    const good = await load({ HUB_ADMIN_KEY: "an-operator-key-0123" })
    assert.strictEqual(good._tag, "Success")
    if (good._tag === "Success") {
      assert.strictEqual(Redacted.value(Option.getOrThrow(good.success.secrets.HUB_ADMIN_KEY)), "an-operator-key-0123")
    }
    for (const bad of ["short", "                    ", "sixteen chars with spaces"]) {
      const refused = await load({ HUB_ADMIN_KEY: bad })
      assert.strictEqual(refused._tag, "Failure", bad)
      const text = String(refused._tag === "Failure" ? refused.failure : "")
      assert.include(text, "HUB_ADMIN_KEY")
      if (bad.trim().length > 0) assert.notInclude(text, bad)
    }
  })

  it("reads HUB_OIDC_SIGNING_KEY written on one line, its line breaks as \\n (an environment file)", async () => {
    const pem = "-----BEGIN PRIVATE KEY-----\nMIGHAgEA\n-----END PRIVATE KEY-----\n"
    for (const written of [pem, pem.replace(/\n/g, "\\n")]) {
      const loaded = await load({ HUB_OIDC_SIGNING_KEY: written })
      assert.strictEqual(loaded._tag, "Success")
      if (loaded._tag === "Success") {
        assert.strictEqual(Redacted.value(Option.getOrThrow(loaded.success.hubOidcSigningKey)), pem)
      }
    }
  })

  it("parses HUB_CONTEXT_KEYS, and refuses a bad entry by its position without the key", async () => {
    const good = await load({ HUB_CONTEXT_KEYS: "tasks:0123456789abcdef0123" })
    assert.strictEqual(good._tag, "Success")
    if (good._tag === "Success") assert.isTrue(good.success.hubContextKeys.configured)
    const refused = await load({ HUB_CONTEXT_KEYS: "invoices:0123456789abcdef0123" })
    assert.strictEqual(refused._tag, "Failure")
    const text = String(refused._tag === "Failure" ? refused.failure : "")
    assert.include(text, "entry 1")
    assert.notInclude(text, "0123456789abcdef0123")
  })

  it("groups shared units of work unless SQL_GROUP_COMMIT is false", async () => {
    const byDefault = await load({})
    const off = await load({ SQL_GROUP_COMMIT: "false" })
    assert.isTrue(byDefault._tag === "Success" && byDefault.success.sqlGroupCommit)
    assert.isTrue(off._tag === "Success" && !off.success.sqlGroupCommit)
    assert.strictEqual((await load({ SQL_GROUP_COMMIT: "sometimes" }))._tag, "Failure")
  })
})
