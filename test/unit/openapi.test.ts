import { assert, describe, it } from "@effect/vitest"
import { Validator } from "@seriousme/openapi-schema-validator"
import { parse } from "yaml"
import { DecisionsApi } from "../../adapters/http/decisions/Api.ts"
import { HubApi } from "../../adapters/http/hub/Api.ts"
import { documentYaml, openApiDocument } from "../../adapters/http/OpenApiRoutes.ts"
import { TasksApi } from "../../adapters/http/tasks/Api.ts"
import { createConfig, lintFromString } from "@redocly/openapi-core"

const documents = {
  hub: openApiDocument(HubApi),
  decisions: openApiDocument(DecisionsApi),
  tasks: openApiDocument(TasksApi)
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

    it(`${service}: documents the uniform group`, () => {
      for (const path of ["/api/v1/health", "/api/v1/ready", "/api/v1/version", "/api/v1/manifest"]) {
        assert.isDefined(spec.paths[path]?.get, path)
      }
    })
  }

  it("documents optional fields as optional, not as nullable (decoding refuses null)", () => {
    const schemas = documents.decisions.components.schemas as Record<string, any>
    assert.deepStrictEqual(schemas["DecisionCreate"].properties.body.type, "string")
    assert.deepStrictEqual(schemas["DecisionCreate"].required, ["title", "roleSlug", "options"])
    assert.deepStrictEqual(schemas["Decision"].properties.expiresAt, { type: "string" })
    assert.notInclude(JSON.stringify(schemas["DecisionCreate"]), '"null"')
  })

  it("the validator refuses a broken document (so the checks above can fail)", async () => {
    const broken = { ...structuredClone(documents.hub), info: { title: 1 } }
    const result = await new Validator().validate(broken as never)
    assert.isFalse(result.valid)
  })
})
