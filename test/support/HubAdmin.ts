import { Context, Effect, Layer, Redacted } from "effect"
import { FactOutboxMemory } from "../../adapters/memory/hub/FactOutboxMemory.ts"
import { HttpApi } from "effect/http-api"
import { DirectoryMemory } from "../../adapters/memory/hub/DirectoryMemory.ts"
import { ServiceStoreMemory } from "../../adapters/memory/hub/ServiceStoreMemory.ts"
import { AdminGroup } from "../../adapters/http/hub/AdminApi.ts"
import { HubAdminAuthLayer } from "../../adapters/http/hub/AdminAuth.ts"
import { AdminHandlers } from "../../adapters/http/hub/AdminHandlers.ts"
import { reportAllIssues } from "../../adapters/http/ParseOptions.ts"
import { serviceRoutes } from "../../adapters/http/ServiceHttp.ts"
import { Directory } from "../../core/hub/Directory.ts"
import { Registry } from "../../core/hub/Registry.ts"
import { HubDirectoryUseCases } from "../../apps/server/hub/HubLayers.ts"
import { serveForTest } from "./Http.ts"
import { IdempotencyLayers } from "../../adapters/http/IdempotencyLayers.ts"
import { IdempotencyStoreMemory } from "../../adapters/memory/IdempotencyStoreMemory.ts"
import { TransactionsMemory } from "../../adapters/memory/TransactionsMemory.ts"

export const adminKey = "hub-admin-key-for-tests-0123456789"
export const issuer = "platform-hub-test"
export const secretsKey = "hub-secrets-key-for-tests-0123456789"

/** The operator group alone, in an HttpApi of its own, parsed as the hub parses (every issue reported). */
export class AdminTestApi extends HttpApi.make("hub-admin-test")
  .add(AdminGroup)
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {}) {}

/**
 * Serves the operator group on the memory adapters; answers the base URL and the use cases behind it, so a
 * test can do what no endpoint does (record a conformance report, open the credentials).
 */
export const serveAdmin = (options: { readonly adminKey?: string | undefined } = { adminKey }) =>
  Effect.gen(function* () {
    const ports = yield* Layer.build(
      HubDirectoryUseCases(
        { secretsKey, allowLoopbackHttp: true },
        Layer.mergeAll(DirectoryMemory, ServiceStoreMemory, FactOutboxMemory)
      )
    )
    const routes = serviceRoutes({
      api: AdminTestApi,
      handlers: AdminHandlers(AdminTestApi, { issuer }),
      errors: { dialect: "hub", maxBodyBytes: 64 * 1024 }
    }).pipe(
      Layer.provide(
        HubAdminAuthLayer({ adminKey: options.adminKey === undefined ? undefined : Redacted.make(options.adminKey) })
      ),
      Layer.provide(IdempotencyLayers({ dialect: "hub", secretsKey })),
      Layer.provide(Layer.merge(IdempotencyStoreMemory, TransactionsMemory)),
      Layer.provide(Layer.succeedContext(ports))
    )
    const { baseUrl } = yield* serveForTest(routes)
    return { baseUrl, registry: Context.get(ports, Registry), directory: Context.get(ports, Directory) }
  })
