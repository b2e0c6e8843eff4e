import { assert, describe, it } from "@effect/vitest"
import { Validator } from "@seriousme/openapi-schema-validator"
import { parse } from "yaml"
import { DecisionsApi } from "../../adapters/http/decisions/Api.ts"
import { HubApi } from "../../adapters/http/hub/Api.ts"
import { openApiDocument } from "../../adapters/http/OpenApiRoutes.ts"
import { TasksApi } from "../../adapters/http/tasks/Api.ts"
import { toYaml } from "../../adapters/http/Yaml.ts"

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

    it(`${service}: the YAML form reads back as the same document`, () => {
      assert.deepStrictEqual(parse(toYaml(spec)), JSON.parse(JSON.stringify(spec)))
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

  it("the YAML emitter round-trips awkward values", () => {
    const value = {
      "a: b": ["x", "- y", "#z", "", "true", "null", "1.5", 'quote " and \\ back', "line\nbreak", "ünï ✓"],
      nested: [{ k: [] }, { k: {} }, [1, [2, 3]], null, false, 0, -1.25e-7],
      empty: {},
      list: []
    }
    assert.deepStrictEqual(parse(toYaml(value)), value)
  })
})
