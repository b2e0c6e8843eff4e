import { Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { assert, describe, it } from "vitest"
import { DirectoryMemory } from "../../adapters/memory/hub/DirectoryMemory.ts"
import { hubOpenIdRoutes } from "../../apps/server/hub/HubRoutes.ts"
import { serveForTest } from "../support/Http.ts"

describe("OpenID Connect at the hub, not configured", () => {
  it("answers 501 at discovery and every provider route, and a 501 page at /auth/oidc", async () => {
    const scope = await Effect.runPromise(Scope.make())
    try {
      const routes = hubOpenIdRoutes(
        { provider: undefined, signIn: undefined },
        {
          personOf: () => Effect.succeed(undefined),
          startSession: (_userId, response) => Effect.succeed(response)
        }
      ).pipe(
        Layer.provide(DirectoryMemory),
        // Never reached without a configuration; the layer still names the SQL client it would use.
        Layer.provide(Layer.succeed(SqlClient.SqlClient, undefined as never))
      )
      const { baseUrl } = await Effect.runPromise(Scope.provide(serveForTest(routes), scope))
      for (const path of ["/.well-known/openid-configuration", "/oidc/auth?client_id=tasks", "/oidc/token"]) {
        const answer = await fetch(`${baseUrl}${path}`, { redirect: "manual" })
        assert.strictEqual(answer.status, 501, path)
        assert.strictEqual(((await answer.json()) as any).error.code, "NOT_CONFIGURED")
      }
      for (const path of ["/auth/oidc", "/auth/oidc/callback?code=x&state=y"]) {
        const answer = await fetch(`${baseUrl}${path}`, { redirect: "manual" })
        assert.strictEqual(answer.status, 501, path)
        assert.include(answer.headers.get("content-type"), "text/html")
        assert.include(await answer.text(), "not set up")
      }
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})
