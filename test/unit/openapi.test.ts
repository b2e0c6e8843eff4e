import { assert, describe, it } from "@effect/vitest"
import { Validator } from "@seriousme/openapi-schema-validator"
import { parse } from "yaml"
import { DecisionsApi } from "../../adapters/http/decisions/Api.ts"
import { HubApi } from "../../adapters/http/hub/Api.ts"
import { HubContractApi } from "../../adapters/http/hub/ContractDocument.ts"
import { documentYaml, openApiDocument } from "../../adapters/http/OpenApiRoutes.ts"
import { TasksApi } from "../../adapters/http/tasks/Api.ts"
import { createConfig, lintFromString } from "@redocly/openapi-core"
import { WorkspaceAuth } from "../../adapters/http/decisions/Auth.ts"
import { ContextSignatureAuth } from "../../adapters/http/hub/ContextApi.ts"
import { IdempotencyOptional, IdempotencyRequired } from "../../adapters/http/IdempotencyMiddleware.ts"
import { TasksApiAuth } from "../../adapters/http/tasks/Auth.ts"

const documents = {
  hub: openApiDocument(HubApi),
  "hub (the whole contract)": openApiDocument(HubContractApi),
  decisions: openApiDocument(DecisionsApi),
  tasks: openApiDocument(TasksApi)
}

const apis = { hub: HubApi, decisions: DecisionsApi, tasks: TasksApi }

interface Parameter {
  readonly name: string
  readonly in: string
  readonly required?: boolean
}

/** Every operation of a contract with the middleware keys of its endpoint and its documented header parameters. */
const operationsOf = (service: keyof typeof apis) => {
  const byId = new Map<string, ReadonlyArray<Parameter>>()
  for (const item of Object.values(documents[service].paths)) {
    for (const operation of Object.values(item as Record<string, unknown>)) {
      if (typeof operation === "object" && operation !== null && "operationId" in operation) {
        const { operationId, parameters } = operation as { operationId: string; parameters?: Array<Parameter> }
        byId.set(operationId, parameters ?? [])
      }
    }
  }
  const groups = (apis[service] as unknown as { groups: Record<string, { endpoints: Record<string, unknown> }> }).groups
  return Object.entries(groups).flatMap(([groupName, group]) =>
    Object.entries(group.endpoints).map(([name, endpoint]) => {
      const id = `${groupName}.${name}`
      const middlewares = [...(endpoint as { middlewares: ReadonlySet<{ key: string }> }).middlewares].map((m) => m.key)
      const headers = (byId.get(id) ?? []).filter((p) => p.in === "header")
      return { id, middlewares, header: (name: string) => headers.find((p) => p.name === name) }
    })
  )
}

describe("the OpenAPI documents", () => {
  for (const [service, spec] of Object.entries(documents)) {
    it(`${service}: validates as OpenAPI 3.1 and carries version 1.0.0`, async () => {
      const validator = new Validator()
      const result = await validator.validate(structuredClone(spec) as never)
      assert.deepStrictEqual(result.errors, undefined)
      assert.isTrue(result.valid)
      assert.strictEqual(validator.version, "3.1")
      assert.strictEqual(spec.info.version, "1.0.0")
    })

    it(`${service}: the YAML form is plain YAML that reads back as the same document`, () => {
      const yaml = documentYaml(spec)
      assert.deepStrictEqual(parse(yaml), JSON.parse(JSON.stringify(spec)))
      assert.match(yaml, /^openapi: 3\.1\.0$/m)
      assert.match(yaml, /^paths:$/m)
    })

    it(`${service}: Redocly's recommended rules report no error`, async () => {
      const config = await createConfig({ extends: ["recommended"] })
      const problems = await lintFromString({ source: JSON.stringify(spec), absoluteRef: `${service}.json`, config })
      const errors = problems
        .filter((problem) => problem.severity === "error")
        .map((problem) => `${problem.ruleId}: ${problem.message} ${problem.location[0]?.pointer ?? ""}`)
      assert.deepStrictEqual(errors, [])
    })

    it(`${service}: every operation has a summary and every tag is declared once`, () => {
      const tags = (spec.tags ?? []).map((tag) => tag.name)
      assert.strictEqual(new Set(tags).size, tags.length)
      for (const item of Object.values(spec.paths)) {
        for (const operation of Object.values(item as Record<string, { summary?: string }>)) {
          if (typeof operation === "object" && operation !== null && "operationId" in operation) {
            assert.isString(operation.summary)
          }
        }
      }
    })

    it(`${service}: says each tag's description once, and gives no integer the safe-integer bounds`, () => {
      for (const tag of spec.tags ?? []) {
        const description = tag.description ?? ""
        const half = description.slice(0, Math.floor(description.length / 2)).trim()
        assert.isFalse(half.length > 0 && description.indexOf(half, half.length) !== -1, `${tag.name}: ${description}`)
      }
      const text = JSON.stringify(spec)
      assert.notInclude(text, String(Number.MIN_SAFE_INTEGER))
      assert.notInclude(text, String(Number.MAX_SAFE_INTEGER))
    })

    it(`${service}: documents the uniform group`, () => {
      for (const path of ["/api/v1/health", "/api/v1/ready", "/api/v1/version", "/api/v1/manifest"]) {
        assert.isDefined(spec.paths[path]?.get, path)
      }
    })
  }

  it("the hub's document holds its own routes and the uniform service contract, served at each service", () => {
    const spec = documents["hub (the whole contract)"]
    assert.strictEqual(spec.info.version, "1.0.0")
    for (const path of Object.keys(documents.hub.paths)) assert.property(spec.paths, path)
    const service = ["/api/v1/summary", "/api/v1/activity", "/api/v1/search", "/api/v1/facts", "/api/v1/pages"]
    for (const path of [...service, "/api/v1/pages/{id}", "/api/v1/actions/{actionId}"]) {
      const item = spec.paths[path] as Record<string, { servers?: ReadonlyArray<{ url: string }> }>
      const operation = item["get"] ?? item["post"]
      assert.strictEqual(operation?.servers?.[0]?.url, "{serviceUrl}", path)
    }
    // The hub's own operations are served where the document is.
    assert.isUndefined((spec.paths["/api/v1/event-catalog"] as Record<string, { servers?: unknown }>)["get"]?.servers)
    const facts = (spec.paths["/api/v1/facts"] as Record<string, any>)["post"]
    assert.hasAllKeys(facts.responses, ["202", "400", "401", "413", "503"])
    // Each service keeps its own document, holding the facts route it serves.
    for (const service of ["decisions", "tasks"] as const) assert.property(documents[service].paths, "/api/v1/facts")
  })

  it("documents optional fields as optional, not as nullable (decoding refuses null)", () => {
    const schemas = documents.decisions.components.schemas as Record<string, any>
    assert.deepStrictEqual(schemas["DecisionCreate"].properties.body.type, "string")
    assert.deepStrictEqual(schemas["DecisionCreate"].required, ["title", "roleSlug", "options"])
    assert.deepStrictEqual(schemas["Decision"].properties.expiresAt, { type: "string" })
    assert.notInclude(JSON.stringify(schemas["DecisionCreate"]), '"null"')
  })

  it("declares Idempotency-Key on every mutation that honours it, required where it is required", () => {
    let mutations = 0
    for (const service of ["hub", "decisions", "tasks"] as const) {
      for (const operation of operationsOf(service)) {
        const required = operation.middlewares.includes(IdempotencyRequired.key)
        const optional = operation.middlewares.includes(IdempotencyOptional.key)
        if (!required && !optional) continue
        mutations++
        const header = operation.header("idempotency-key")
        assert.isDefined(header, `${service} ${operation.id}`)
        assert.strictEqual(header?.required, required, `${service} ${operation.id}`)
      }
    }
    assert.isAbove(mutations, 50)
  })

  it("declares the credential headers each plane reads", () => {
    const expect = (
      service: keyof typeof apis,
      middleware: string,
      headers: ReadonlyArray<readonly [name: string, required: boolean]>
    ) => {
      const operations = operationsOf(service).filter((operation) => operation.middlewares.includes(middleware))
      assert.isNotEmpty(operations, middleware)
      for (const operation of operations) {
        for (const [name, required] of headers) {
          assert.strictEqual(operation.header(name)?.required, required, `${service} ${operation.id} ${name}`)
        }
      }
    }
    expect("decisions", WorkspaceAuth.key, [
      ["x-decisions-api-key", true],
      ["x-workspace-token", true]
    ])
    expect("tasks", TasksApiAuth.key, [["x-api-key", false]])
    expect("hub", ContextSignatureAuth.key, [
      ["x-workspace-service-id", true],
      ["x-platform-timestamp", true],
      ["x-platform-signature", true]
    ])
    const ingest = operationsOf("hub").find((operation) => operation.id === "eventIngest.deliver")
    for (const name of ["x-platform-signature", "x-platform-timestamp", "x-platform-event-id"]) {
      assert.strictEqual(ingest?.header(name)?.required, false, name)
    }
  })

  it("the validator refuses a broken document (so the checks above can fail)", async () => {
    const broken = { ...structuredClone(documents.hub), info: { title: 1 } }
    const result = await new Validator().validate(broken as never)
    assert.isFalse(result.valid)
  })
})
