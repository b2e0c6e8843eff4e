import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { DecisionsApi } from "../../adapters/http/decisions/Api.ts"
import { HubApi } from "../../adapters/http/hub/Api.ts"
import { startServer, tempDataDir } from "../support/ServerProcess.ts"
import { mintToken } from "../support/Tokens.ts"

/**
 * An embedder's view: the exported contracts give a typed client (effect's HttpApiClient) for the running
 * server. This file is type-checked with the rest (`npm run check`): the fields read below are typed by the
 * contracts' success schemas, with no cast.
 */
describe("embedding the contracts", () => {
  it.live(
    "a typed client creates hub and decisions resources on the real server and reads their fields",
    () =>
      Effect.gen(function* () {
        const dataDir = tempDataDir()
        const server = yield* Effect.acquireRelease(
          Effect.promise(() => startServer({ DATA_DIR: dataDir })),
          (s) => Effect.promise(() => s.stop("SIGKILL"))
        )
        const secrets = JSON.parse(readFileSync(join(dataDir, "dev-secrets.json"), "utf8")) as Record<string, string>
        // The hub's operator plane: an organization.
        const hub = yield* HttpApiClient.make(HubApi, {
          baseUrl: `http://127.0.0.1:${server.ports.hub}`,
          transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(secrets["HUB_ADMIN_KEY"]!))
        })
        const org = yield* hub.admin.createOrg({ payload: { name: "Acme" } })
        const orgId: string = org.data.org.id
        assert.strictEqual(org.data.org.name, "Acme")

        // Decisions: an admin's role and caller key, then a caller's decision.
        const token = yield* Effect.promise(() =>
          mintToken({
            key: secrets["DECISIONS_EMBED_KEY"]!,
            issuer: "platform-hub",
            audience: "decisions",
            email: "admin@acme.test",
            companyId: orgId,
            orgRole: "OWNER"
          })
        )
        const workspace = yield* HttpApiClient.make(DecisionsApi, {
          baseUrl: `http://127.0.0.1:${server.ports.decisions}`,
          transformClient: HttpClient.mapRequest(
            HttpClientRequest.setHeaders({
              "x-decisions-api-key": secrets["DECISIONS_API_KEY"]!,
              "x-workspace-token": token
            })
          )
        })
        const role = yield* workspace.workspaceRoles.create({ payload: { slug: "ops", name: "Ops" } })
        assert.strictEqual(role.data.role.slug, "ops")
        const key = yield* workspace.workspaceKeys.create({ payload: { name: "agent" } })
        const plaintext: string = key.data.plaintext

        const caller = yield* HttpApiClient.make(DecisionsApi, {
          baseUrl: `http://127.0.0.1:${server.ports.decisions}`,
          transformClient: HttpClient.mapRequest((request) =>
            request.pipe(
              HttpClientRequest.bearerToken(plaintext),
              HttpClientRequest.setHeader("idempotency-key", "embed-1")
            )
          )
        })
        const created = yield* caller.caller.create({
          payload: { title: "Ship it?", roleSlug: "ops", options: [{ label: "Yes" }, { label: "No" }] }
        })
        const id: string = created.data.decision.id
        assert.strictEqual(created.data.decision.status, "pending")
        const read = yield* caller.caller.get({ params: { id }, query: {} })
        assert.strictEqual(read.data.decision.title, "Ship it?")
      }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer)),
    90_000
  )
})
