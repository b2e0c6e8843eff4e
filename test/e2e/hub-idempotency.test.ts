import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { request } from "../support/Http.ts"
import { adminKey, serveAdmin } from "../support/HubAdmin.ts"

const post = (baseUrl: string, path: string, body: unknown, key?: string) =>
  request(`${baseUrl}${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${adminKey}`,
      "content-type": "application/json",
      ...(key === undefined ? {} : { "idempotency-key": key })
    },
    body: JSON.stringify(body)
  })

describe("hub operator mutations honour Idempotency-Key", () => {
  it.live("a repeated create answers the first response byte for byte and creates one organization", () =>
    Effect.gen(function* () {
      const { baseUrl, directory } = yield* serveAdmin()
      const answers = yield* Effect.forEach(
        Array.from({ length: 6 }),
        () => post(baseUrl, "/api/v1/admin/orgs", { name: "Acme" }, "org-1"),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(
        answers.map((a) => a.status),
        answers.map(() => 201)
      )
      for (const answer of answers) assert.strictEqual(answer.text, answers[0]!.text)
      const orgs = yield* directory.listOrgs()
      assert.strictEqual(orgs.filter((o) => o.name === "Acme").length, 1)
      const other = yield* post(baseUrl, "/api/v1/admin/orgs", { name: "Other" }, "org-1")
      assert.strictEqual(other.status, 409)
      assert.strictEqual(other.json.error.code, "CONFLICT")
      const invalid = yield* post(baseUrl, "/api/v1/admin/orgs", { name: "Acme" }, "two words")
      assert.strictEqual(invalid.status, 400)
      assert.strictEqual(invalid.json.error.code, "VALIDATION_ERROR")
    })
  )

  it.live("a replayed registration shows the same credentials once more, never new ones", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serveAdmin()
      const body = { id: "acmecrm", displayName: "Acme CRM", baseUrl: "http://127.0.0.1:9" }
      const first = yield* post(baseUrl, "/api/v1/admin/services", body, "reg-1")
      const again = yield* post(baseUrl, "/api/v1/admin/services", body, "reg-1")
      assert.strictEqual(first.status, 201, first.text)
      assert.strictEqual(again.text, first.text)
      const withoutKey = yield* post(baseUrl, "/api/v1/admin/services", body)
      assert.strictEqual(withoutKey.status, 409)
    })
  )
})
