import { assert } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { ServiceSettings } from "../../apps/server/Services.ts"
import { DecisionsServing } from "../../apps/server/decisions/DecisionsService.ts"
import { Readiness } from "../../core/kernel/index.ts"
import { request, serveForTest } from "./Http.ts"
import { testDecisionsKeys, testServiceSettings } from "./ServiceSettings.ts"
import { mintToken } from "./Tokens.ts"

/** Readiness that always answers ready, for stacks whose storage is not what the test is about. */
export const alwaysReady = Layer.succeed(Readiness)({ check: Effect.void })

export interface DecisionsServedOptions<E2, R2> {
  /** What the test changes of `testServiceSettings`. */
  readonly settings?: Partial<ServiceSettings> | undefined
  /** What runs beside the routes over the same data, such as the service's workers. */
  readonly alongside?: Layer.Layer<never, E2, R2> | undefined
}

/**
 * The decisions service's routes (both HTTP planes and the MCP endpoint), and what runs `alongside`, over
 * `data` (its use cases and idempotency store), as the bundled server composes them.
 */
export const decisionsServed = <A, E, R, E2 = never, R2 = never>(
  data: Layer.Layer<A, E, R>,
  options: DecisionsServedOptions<E2, R2> = {}
) =>
  Layer.merge(
    DecisionsServing({ routes: testServiceSettings(options.settings) }),
    options.alongside ?? Layer.empty
  ).pipe(Layer.provide(Layer.merge(data, alwaysReady)))

/** `decisionsServed` on a loopback port for the life of the scope, answering in the decisions dialect. */
export const serveDecisions = <A, E, R, E2 = never, R2 = never>(
  data: Layer.Layer<A, E, R>,
  options: DecisionsServedOptions<E2, R2> = {}
) => serveForTest(decisionsServed(data, options), { dialect: "decisions" })

/**
 * An identity token for the decisions service, as the hub mints it for a person of `companyId`; `key` and
 * `audience` change it for tests of tokens the service must refuse.
 */
export const identityToken = (
  email: string,
  companyId: string,
  orgRole = "MEMBER",
  options: { readonly audience?: string; readonly key?: string } = {}
) =>
  Effect.promise(() =>
    mintToken({
      key: options.key ?? testDecisionsKeys.embedKey,
      issuer: testDecisionsKeys.issuer,
      audience: options.audience ?? "decisions",
      email,
      companyId,
      orgRole
    })
  )

const jsonBody = (body: unknown) => (body === undefined ? {} : { body: JSON.stringify(body) })

/**
 * The decisions service's two planes over plain HTTP: the workspace plane (and pages plane) as the hub calls it,
 * with the service key and a person's identity token, and the caller plane with a caller key.
 */
export const decisionsClient = (baseUrl: string) => ({
  workspace: (
    method: string,
    path: string,
    workspaceToken: string | undefined,
    body?: unknown,
    headers: Record<string, string> = {}
  ) =>
    request(`${baseUrl}${path}`, {
      method,
      headers: {
        "content-type": "application/json",
        "x-decisions-api-key": testDecisionsKeys.apiKey,
        ...(workspaceToken === undefined ? {} : { "x-workspace-token": workspaceToken }),
        ...headers
      },
      ...jsonBody(body)
    }),
  caller: (method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) =>
    request(`${baseUrl}${path}`, {
      method,
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
      ...jsonBody(body)
    })
})

/**
 * An organization `org` set up on the workspace plane by its admin: a `finance` role held by ada (assigned as
 * `Ada@…`: addresses are compared without case) and a caller key.
 */
export const financeOrganization = (baseUrl: string, org: string) =>
  Effect.gen(function* () {
    const { workspace } = decisionsClient(baseUrl)
    const admin = yield* identityToken(`admin@${org}.test`, org, "ADMIN")
    const role = yield* workspace("POST", "/api/v1/workspace/roles", admin, { slug: "finance", name: "Finance" })
    assert.strictEqual(role.status, 201, role.text)
    const assigned = yield* workspace("POST", "/api/v1/workspace/roles/finance/assignments", admin, {
      memberEmail: `Ada@${org}.test`
    })
    assert.strictEqual(assigned.status, 201, assigned.text)
    const key = yield* workspace("POST", "/api/v1/workspace/keys", admin, { name: "billing-agent" })
    assert.strictEqual(key.status, 201, key.text)
    assert.match(key.json.data.plaintext, /^dcd_/)
    return {
      admin,
      ada: yield* identityToken(`ada@${org}.test`, org),
      key: key.json.data.plaintext as string,
      keyId: key.json.data.key.id as string
    }
  })

/**
 * A caller key of a new organization with a `finance` role (nobody holds it), made on the workspace plane, which
 * spends no caller budget.
 */
export const newCallerKey = (baseUrl: string) =>
  Effect.gen(function* () {
    const { workspace } = decisionsClient(baseUrl)
    const admin = yield* identityToken("admin@acme.test", `acme-${crypto.randomUUID()}`, "ADMIN")
    const role = yield* workspace("POST", "/api/v1/workspace/roles", admin, { slug: "finance", name: "Finance" })
    assert.strictEqual(role.status, 201, role.text)
    const key = yield* workspace("POST", "/api/v1/workspace/keys", admin, { name: "agent" })
    assert.strictEqual(key.status, 201, key.text)
    return key.json.data.plaintext as string
  })

/**
 * The pages plane as the hub calls it, with the service key and the person's identity token: `call` for any
 * path, `page` to read a page document, `act` to run one of its actions (once per `idempotencyKey` when given).
 */
export const pagesPlane = (baseUrl: string) => {
  const call = decisionsClient(baseUrl).workspace
  return {
    call,
    page: (id: string, as: string) => call("GET", `/api/v1/pages/${id}`, as),
    act: (actionId: string, as: string, values: Record<string, string> = {}, idempotencyKey?: string) =>
      call(
        "POST",
        `/api/v1/actions/${actionId}`,
        as,
        values,
        idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }
      )
  }
}
