import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { request, type Answer } from "../support/Http.ts"
import { startServer, tempDataDir } from "../support/ServerProcess.ts"
import { mintToken } from "../support/Tokens.ts"

const machineKey = "tk_validation_details_machine_key_0123"

/** The shape of a validation answer of the envelope: the key set of every entry of `details`, and their types. */
const envelopeShape = (answer: Answer, code: string) => {
  assert.strictEqual(answer.status, 400, answer.text)
  assert.strictEqual(answer.json.error.code, code, answer.text)
  const details: ReadonlyArray<Record<string, unknown>> = answer.json.error.details
  assert.isArray(details, answer.text)
  assert.isNotEmpty(details, answer.text)
  return details.map((entry) =>
    Object.entries(entry)
      .map(([key, value]) => `${key}:${typeof value}`)
      .sort()
      .join(",")
  )
}

const oneField = ["field:string,in:string,message:string"]

/** The task inbox's validation answer: `{error: "Validation failed", fields: {<field>: <message>}}`. */
const tasksShape = (answer: Answer) => {
  assert.strictEqual(answer.status, 400, answer.text)
  assert.deepStrictEqual(Object.keys(answer.json).sort(), ["error", "fields"], answer.text)
  assert.strictEqual(answer.json.error, "Validation failed")
  const fields = Object.entries(answer.json.fields as Record<string, unknown>)
  assert.isNotEmpty(fields)
  return [...new Set(fields.map(([key, value]) => `${typeof key}:${typeof value}`))]
}

describe("one details shape per dialect", () => {
  it.live(
    "a refusal by the contract's schema and one by a use case's rule carry the same details shape, on every service",
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
        const send =
          (port: number, base: Record<string, string>) =>
          (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
            request(`http://127.0.0.1:${port}${path}`, {
              method,
              headers: { "content-type": "application/json", ...base, ...headers },
              ...(body === undefined ? {} : { body: JSON.stringify(body) })
            })

        // The hub: an empty name fails the contract's schema, a blank one the use case; a bad service id is
        // the registry's rule; a bad Idempotency-Key the idempotency rules. A path parameter refused by the
        // contract (not an email) and by the use case (no such flag), a query parameter by the contract.
        const hub = send(server.ports.hub, { authorization: `Bearer ${secrets["HUB_ADMIN_KEY"]!}` })
        const hubAnswers = [
          yield* hub("POST", "/api/v1/admin/orgs", { name: "" }),
          yield* hub("POST", "/api/v1/admin/orgs", { name: "   " }),
          yield* hub("POST", "/api/v1/admin/services", {}),
          yield* hub("POST", "/api/v1/admin/services", {
            id: "In-Voices",
            displayName: "X",
            baseUrl: "https://invoices.example.com"
          }),
          yield* hub("POST", "/api/v1/admin/orgs", { name: "Acme" }, { "idempotency-key": "not visible ascii é" }),
          yield* hub("GET", "/api/v1/admin/users/not-an-email/notifications"),
          yield* hub("PUT", "/api/v1/admin/flags/made-up", { enabled: true }),
          yield* hub("GET", "/api/v1/admin/users/ada@acme.test/notifications?limit=0")
        ]
        for (const answer of hubAnswers) {
          assert.deepStrictEqual(new Set(envelopeShape(answer, "VALIDATION_ERROR")), new Set(oneField))
        }
        assert.deepStrictEqual(
          hubAnswers.map((answer) => answer.json.error.details.map((d: { in: string; field: string }) => d.in)),
          [["body"], ["body"], ["body", "body", "body"], ["body"], ["header"], ["path"], ["path"], ["query"]]
        )
        assert.deepStrictEqual(
          hubAnswers.slice(5).map((answer) => answer.json.error.details[0].field),
          ["email", "name", "limit"]
        )

        // Decisions: a webhook URL refused by the use case against a missing one; an info request that is not
        // open (the use case) against a missing one (the schema); a bad limit; a bad Idempotency-Key on create;
        // a decision id longer than any (a path parameter).
        const token = yield* Effect.promise(() =>
          mintToken({
            key: secrets["DECISIONS_EMBED_KEY"]!,
            issuer: "platform-hub",
            audience: "decisions",
            email: "admin@acme.test",
            companyId: "org_validation_details",
            orgRole: "OWNER"
          })
        )
        const workspace = send(server.ports.decisions, {
          "x-decisions-api-key": secrets["DECISIONS_API_KEY"]!,
          "x-workspace-token": token
        })
        const key = yield* workspace("POST", "/api/v1/workspace/keys", { name: "agent" })
        assert.strictEqual(key.status, 201, key.text)
        const caller = send(server.ports.decisions, { authorization: `Bearer ${key.json.data.plaintext}` })
        assert.strictEqual(
          (yield* workspace("POST", "/api/v1/workspace/roles", { slug: "ops", name: "Ops" })).status,
          201
        )
        const decision = yield* caller(
          "POST",
          "/api/v1/decisions",
          { title: "Ship it?", roleSlug: "ops", options: [{ label: "Yes" }, { label: "No" }] },
          { "idempotency-key": "details-1" }
        )
        assert.strictEqual(decision.status, 201, decision.text)
        const decisionId: string = decision.json.data.decision.id
        const assigned = yield* workspace("POST", "/api/v1/workspace/roles/ops/assignments", {
          memberEmail: "admin@acme.test"
        })
        assert.strictEqual(assigned.status, 201, assigned.text)
        const asked = yield* workspace("POST", `/api/v1/workspace/decisions/${decisionId}/info-requests`, {
          question: "Which release?"
        })
        assert.strictEqual(asked.status, 200, asked.text)
        const infoResponse = `/api/v1/decisions/${decisionId}/info-response`
        const decisionsAnswers = [
          yield* caller("POST", "/api/v1/webhooks", {}),
          yield* caller("POST", "/api/v1/webhooks", { url: "https://user:secret@hooks.example.com/hook" }),
          yield* caller("GET", "/api/v1/decisions?limit=abc"),
          yield* caller("POST", infoResponse, { infoRequestId: "ask_none", answer: "Yes" }),
          yield* caller("POST", infoResponse, { answer: "Yes" }),
          yield* caller("POST", "/api/v1/decisions", { title: "T" }, { "idempotency-key": "not visible ascii é" }),
          yield* caller("GET", `/api/v1/decisions/${"x".repeat(65)}`),
          yield* workspace("POST", "/api/v1/workspace/roles", { slug: "" })
        ]
        for (const answer of decisionsAnswers) {
          assert.deepStrictEqual(new Set(envelopeShape(answer, "validation_error")), new Set(oneField))
        }
        assert.deepStrictEqual(
          decisionsAnswers
            .slice(0, 7)
            .map((answer) => [answer.json.error.details[0].in, answer.json.error.details[0].field]),
          [
            ["body", "url"],
            ["body", "url"],
            ["query", "limit"],
            ["body", "infoRequestId"],
            ["body", "infoRequestId"],
            ["header", "Idempotency-Key"],
            ["path", "id"]
          ]
        )

        // The task inbox: its `{error, fields}` for a missing title (schema) and an unknown priority (rule).
        const tasks = send(server.ports.tasks, { "x-api-key": machineKey })
        const tasksAnswers = [
          yield* tasks("POST", "/api/tasks", {}),
          yield* tasks("POST", "/api/tasks", { title: "Write it", priority: "whenever" }),
          yield* tasks("GET", "/api/tasks/search?activeOnly=maybe"),
          yield* tasks("POST", "/api/tasks", "not an object")
        ]
        for (const answer of tasksAnswers) assert.deepStrictEqual(tasksShape(answer), ["string:string"])
        assert.deepStrictEqual(
          tasksAnswers.slice(0, 3).map((answer) => Object.keys(answer.json.fields)),
          [["title"], ["priority"], ["activeOnly"]]
        )
      }).pipe(Effect.scoped),
    120_000
  )
})
