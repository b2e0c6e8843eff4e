import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { DecisionsApi } from "../../adapters/http/decisions/Api.ts"
import { HubApi } from "../../adapters/http/hub/Api.ts"
import { TasksApi } from "../../adapters/http/tasks/Api.ts"
import { startServer, tempDataDir } from "../support/ServerProcess.ts"
import { mintToken } from "../support/Tokens.ts"

/**
 * An embedder's view: the exported contracts give a typed client (effect's HttpApiClient) for the running
 * server. This file is type-checked with the rest (`npm run check`): the fields read below are typed by the
 * contracts' success schemas, with no cast.
 */
const machineKey = "tk_embedding_machine_key_0123456789"

describe("embedding the contracts", () => {
  it.live(
    "a typed client creates hub, decisions and task inbox resources on the real server and reads their fields",
    () =>
      Effect.gen(function* () {
        const dataDir = tempDataDir()
        const server = yield* Effect.acquireRelease(
          Effect.promise(() =>
            startServer({ DATA_DIR: dataDir, TASKS_MACHINE_KEYS: `${machineKey}:ops@acme.test:Ops Bot` })
          ),
          (s) => Effect.promise(() => s.stop("SIGKILL"))
        )
        const secrets = JSON.parse(readFileSync(join(dataDir, "dev-secrets.json"), "utf8")) as Record<string, string>
        // The hub's operator plane: an organization.
        const hub = yield* HttpApiClient.make(HubApi, {
          baseUrl: `http://127.0.0.1:${server.ports.hub}`,
          transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(secrets["HUB_ADMIN_KEY"]!))
        })
        const org = yield* hub.admin.createOrg({ headers: {}, payload: { name: "Acme" } })
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
        // The workspace plane's two headers are part of its contract: the typed client asks for them.
        const workspace = yield* HttpApiClient.make(DecisionsApi, {
          baseUrl: `http://127.0.0.1:${server.ports.decisions}`
        })
        const headers = { "x-decisions-api-key": secrets["DECISIONS_API_KEY"]!, "x-workspace-token": token }
        const role = yield* workspace.workspaceRoles.create({ headers, payload: { slug: "ops", name: "Ops" } })
        assert.strictEqual(role.data.role.slug, "ops")
        const key = yield* workspace.workspaceKeys.create({ headers, payload: { name: "agent" } })
        const plaintext: string = key.data.plaintext

        const caller = yield* HttpApiClient.make(DecisionsApi, {
          baseUrl: `http://127.0.0.1:${server.ports.decisions}`,
          transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(plaintext))
        })
        // `Idempotency-Key` is a declared (required) header of create: the same key and request replay.
        const decision = {
          headers: { "idempotency-key": "embed-1" },
          payload: { title: "Ship it?", roleSlug: "ops", options: [{ label: "Yes" }, { label: "No" }] }
        }
        const created = yield* caller.caller.create(decision)
        const id: string = created.data.decision.id
        assert.strictEqual(created.data.decision.status, "pending")
        const replayed = yield* caller.caller.create(decision)
        assert.strictEqual(replayed.data.decision.id, id)
        assert.strictEqual(replayed.data.decision.createdAt, created.data.decision.createdAt)
        const other = yield* caller.caller.create({ ...decision, headers: { "idempotency-key": "embed-2" } })
        assert.notStrictEqual(other.data.decision.id, id)
        const read = yield* caller.caller.get({ params: { id }, query: {} })
        assert.strictEqual(read.data.decision.title, "Ship it?")

        // The task inbox: an operator machine key in `X-API-Key`, declared by its contract.
        const tasks = yield* HttpApiClient.make(TasksApi, { baseUrl: `http://127.0.0.1:${server.ports.tasks}` })
        const task = yield* tasks.tasks.create({
          headers: { "x-api-key": machineKey, "idempotency-key": "embed-task-1" },
          payload: { title: "Write the release notes", priority: "P1: Top Priority" }
        })
        const taskId: string = task.task.id
        assert.strictEqual(task.ok, true)
        assert.strictEqual(task.task.title, "Write the release notes")
        assert.strictEqual(task.task.priority, "P1: Top Priority")
        const again = yield* tasks.tasks.create({
          headers: { "x-api-key": machineKey, "idempotency-key": "embed-task-1" },
          payload: { title: "Write the release notes", priority: "P1: Top Priority" }
        })
        assert.strictEqual(again.task.id, taskId)
        const fetched = yield* tasks.tasks.get({ headers: { "x-api-key": machineKey }, params: { id: taskId } })
        assert.strictEqual(fetched.task.title, "Write the release notes")
      }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer)),
    90_000
  )
})
