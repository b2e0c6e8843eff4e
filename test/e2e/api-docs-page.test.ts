import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import type { Browser } from "playwright-core"
import { DecisionsApi } from "../../adapters/http/decisions/Api.ts"
import { HubApi } from "../../adapters/http/hub/Api.ts"
import { docsPath, openApiRoutes } from "../../adapters/http/OpenApiRoutes.ts"
import { TasksApi } from "../../adapters/http/tasks/Api.ts"
import { launchBrowser, watchCsp, watchPageErrors } from "../support/Chromium.ts"
import { serveForTest } from "../support/Http.ts"

let browser: Browser
beforeAll(async () => {
  browser = await launchBrowser()
})
afterAll(async () => {
  await browser.close()
})

/** Each service's docs page, served as its listener serves it. */
const served = (api: Parameters<typeof openApiRoutes>[0]) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const { baseUrl } = yield* serveForTest(openApiRoutes(api)).pipe(Scope.provide(scope))
      return { baseUrl, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
    })
  )

describe("the API docs page in Chromium (/api/v1/docs)", () => {
  for (const [service, api] of [
    ["hub", HubApi],
    ["decisions", DecisionsApi],
    ["tasks", TasksApi]
  ] as const) {
    it(`${service}: is self-contained: every request the page makes goes to the service itself`, async () => {
      const { baseUrl, close } = await served(api as never)
      const page = await browser.newPage()
      try {
        const requested: Array<string> = []
        page.on("request", (request) => requested.push(request.url()))
        const errors = watchPageErrors(page)
        const refused = watchCsp(page)
        await page.goto(`${baseUrl}${docsPath}`, { waitUntil: "networkidle" })
        // The page rendered the contract (its operations are listed).
        await page.getByText("Health", { exact: false }).first().waitFor()
        const outside = requested.filter((url) => !url.startsWith(`${baseUrl}/`) && !url.startsWith("data:"))
        assert.deepStrictEqual(outside, [])
        assert.deepStrictEqual(errors, [])
        // Its policy lets nothing else in, and refuses nothing the page itself needs.
        assert.deepStrictEqual(refused, [])
        const policy = (await page.context().request.get(`${baseUrl}${docsPath}`)).headers()["content-security-policy"]
        assert.include(policy, "default-src 'none'")
        assert.include(policy, "connect-src 'self'")
      } finally {
        await page.close()
        await close()
      }
    })
  }
})
