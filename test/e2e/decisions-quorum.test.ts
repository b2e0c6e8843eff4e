import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { DecisionsApi } from "../../adapters/http/decisions/Api.ts"
import { HubApi } from "../../adapters/http/hub/Api.ts"
import { freshPostgres, serverDatabases } from "../support/ServerDatabases.ts"
import { startServer, tempDataDir } from "../support/ServerProcess.ts"
import { mintToken } from "../support/Tokens.ts"

/**
 * A decision with a quorum on the bundled server, through the typed client of the decisions contract: a quorum
 * above the role's holders is refused; a quorum of two resolves only on the second distinct vote, with both
 * recorded; a long-poll begun before the first vote and the webhook outbox hear only the resolution.
 */
describe.each(serverDatabases)("decisions with a quorum on the bundled server ($name)", (database) => {
  it.live(
    "a quorum of 2 resolves only on the second distinct vote, with both recorded",
    () =>
      Effect.gen(function* () {
        const dataDir = tempDataDir()
        const postgres = yield* Effect.acquireRelease(
          Effect.promise(async () => (database.url === undefined ? undefined : freshPostgres(database.url, "quorum"))),
          (db) => Effect.promise(async () => db?.drop())
        )
        const server = yield* Effect.acquireRelease(
          Effect.promise(() =>
            startServer(
              { DATA_DIR: dataDir, ...(postgres === undefined ? {} : { DATABASE_URL: postgres.url }) },
              // A fresh embedded database is migrated first: slow on a busy machine.
              { readyWithinMillis: 240_000 }
            )
          ),
          (s) => Effect.promise(() => s.stop("SIGKILL"))
        )
        const secrets = JSON.parse(readFileSync(join(dataDir, "dev-secrets.json"), "utf8")) as Record<string, string>
        const hub = yield* HttpApiClient.make(HubApi, {
          baseUrl: `http://127.0.0.1:${server.ports.hub}`,
          transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(secrets["HUB_ADMIN_KEY"]!))
        })
        const orgId = (yield* hub.admin.createOrg({ headers: {}, payload: { name: "Acme" } })).data.org.id
        const decisionsUrl = `http://127.0.0.1:${server.ports.decisions}`
        const headersOf = (email: string, orgRole = "MEMBER") =>
          Effect.map(
            Effect.promise(() =>
              mintToken({
                key: secrets["DECISIONS_EMBED_KEY"]!,
                issuer: "platform-hub",
                audience: "decisions",
                email,
                companyId: orgId,
                orgRole
              })
            ),
            (token) => ({ "x-decisions-api-key": secrets["DECISIONS_API_KEY"]!, "x-workspace-token": token })
          )
        const workspace = yield* HttpApiClient.make(DecisionsApi, { baseUrl: decisionsUrl })
        const admin = yield* headersOf("admin@acme.test", "OWNER")
        const ann = yield* headersOf("ann@acme.test")
        const bob = yield* headersOf("bob@acme.test")
        yield* workspace.workspaceRoles.create({ headers: admin, payload: { slug: "ops", name: "Ops" } })
        for (const email of ["ann@acme.test", "bob@acme.test"]) {
          yield* workspace.workspaceRoles.assign({
            headers: admin,
            params: { slug: "ops" },
            payload: { memberEmail: email }
          })
        }
        const plaintext = (yield* workspace.workspaceKeys.create({ headers: admin, payload: { name: "agent" } })).data
          .plaintext
        const caller = yield* HttpApiClient.make(DecisionsApi, {
          baseUrl: decisionsUrl,
          transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(plaintext))
        })
        const webhook = (yield* caller.callerWebhooks.register({
          headers: {},
          payload: { url: "http://127.0.0.1:9/hook" }
        })).data.webhook
        const options = [
          { id: "yes", label: "Yes" },
          { id: "no", label: "No" }
        ]

        // Three votes from two holders: refused with a clear validation error on quorum.count.
        const tooMany = yield* Effect.promise(() =>
          fetch(`${decisionsUrl}/api/v1/decisions`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${plaintext}`,
              "content-type": "application/json",
              "idempotency-key": "quorum-too-many"
            },
            body: JSON.stringify({ title: "Ship it?", roleSlug: "ops", options, quorum: { count: 3 } })
          }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))
        )
        assert.strictEqual(tooMany.status, 400)
        assert.strictEqual(tooMany.body.error.code, "validation_error")
        assert.deepStrictEqual(
          tooMany.body.error.details.map((d: { field: string }) => d.field),
          ["quorum.count"]
        )

        const created = yield* caller.caller.create({
          headers: { "idempotency-key": "quorum-1" },
          payload: { title: "Ship it?", roleSlug: "ops", options, quorum: { count: 2 } }
        })
        const id = created.data.decision.id
        assert.deepStrictEqual(created.data.decision.quorum, {
          count: 2,
          votes: [],
          tally: { options: { yes: 0, no: 0 }, declined: 0 }
        })

        // The caller long-polls from before the first vote.
        const poll = yield* Effect.forkChild(caller.caller.get({ params: { id }, query: { wait: 60 } }), {
          startImmediately: true
        })

        const first = yield* workspace.workspaceDecisions.choose({
          headers: ann,
          params: { id },
          payload: { optionId: "yes", rationale: "tested" }
        })
        assert.strictEqual(first.data.decision.status, "pending")
        // Ann votes again: still her one vote.
        yield* workspace.workspaceDecisions.choose({ headers: ann, params: { id }, payload: { optionId: "yes" } })
        const between = (yield* caller.caller.get({ params: { id }, query: {} })).data.decision
        assert.strictEqual(between.status, "pending")
        assert.deepStrictEqual(between.quorum?.tally, { options: { yes: 1, no: 0 }, declined: 0 })
        assert.deepStrictEqual(
          between.quorum?.votes.map((v) => v.by),
          ["ann@acme.test"]
        )
        // Give a long-poll that wrongly answered on a vote the time to show it.
        yield* Effect.sleep("500 millis")

        const second = yield* workspace.workspaceDecisions.choose({
          headers: bob,
          params: { id },
          payload: { optionId: "yes" }
        })
        const resolved = second.data.decision
        assert.strictEqual(resolved.status, "resolved")
        assert.strictEqual(resolved.resolution?.kind, "chosen")
        assert.strictEqual(resolved.resolution?.optionId, "yes")
        assert.strictEqual(resolved.resolution?.decidedBy, "bob@acme.test")
        assert.deepStrictEqual(
          resolved.resolution?.votes?.map((v) => v.by),
          ["ann@acme.test", "bob@acme.test"]
        )
        assert.deepStrictEqual(resolved.quorum?.tally, { options: { yes: 2, no: 0 }, declined: 0 })

        const polled = (yield* Fiber.join(poll)).data.decision
        assert.strictEqual(polled.status, "resolved")
        assert.deepStrictEqual(polled.resolution, resolved.resolution)

        // One webhook delivery for the decision: its resolution, none for the votes before it.
        const deliveries = (yield* workspace.workspaceWebhooks.deliveries({
          headers: admin,
          params: { id: webhook.id },
          query: {}
        })).data.deliveries.filter((d) => d.decisionId === id)
        assert.deepStrictEqual(
          deliveries.map((d) => d.eventType),
          ["decision.resolved"]
        )
      }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer)),
    300_000
  )
})
