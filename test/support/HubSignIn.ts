import { Clock, Context, Effect, Layer, Redacted } from "effect"
import { createServer, type AddressInfo } from "node:net"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Schema } from "effect"
import { MailerSmtp } from "../../adapters/email/MailerSmtp.ts"
import { HubPersonAuth, HubPersonAuthLayer } from "../../adapters/http/hub/PersonAuth.ts"
import { SignInApi } from "../../adapters/http/hub/SignInApi.ts"
import { EmailSignInHandlers, MeHandlers, ViewerLinkHandlers } from "../../adapters/http/hub/SignInHandlers.ts"
import { serviceRoutes } from "../../adapters/http/ServiceHttp.ts"
import { DirectoryMemory } from "../../adapters/memory/hub/DirectoryMemory.ts"
import { TransactionsMemory } from "../../adapters/memory/TransactionsMemory.ts"
import { DirectorySql } from "../../adapters/sql/hub/DirectorySql.ts"
import { hubMigrations } from "../../adapters/sql/hub/migrations.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import {
  HubSignInLayer,
  HubSignInStoresMemory,
  HubSignInStoresSql,
  HubSignInWorkers
} from "../../apps/server/hub/HubSignInRuntime.ts"
import { parseContextKeys, type ContextKeys } from "../../core/hub/ContextKeys.ts"
import { Directory } from "../../core/hub/Directory.ts"
import { MailOutbox } from "../../core/hub/MailOutbox.ts"
import { SignInRequestStore } from "../../core/hub/SignInRequestStore.ts"
import { Transactions } from "../../core/kernel/Transactions.ts"
import { CurrentPerson } from "../../core/hub/Sessions.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"
import type { SqlBackend } from "./Databases.ts"
import { serveForTest } from "./Http.ts"
import type { SmtpTestServer } from "./SmtpServer.ts"

export const hubSecretsKey = "hub-secrets-key-for-sign-in-tests-0123"
export const recapsContextKey = "recaps-context-key-0123456789abcdef"
export const tasksContextKey = "tasks-context-key-0123456789abcdef"

/** The wall clock moved on by `offsetMillis`: links and sessions expire without waiting. */
export const offsetClock = () => {
  let offset = 0
  const clock: Clock.Clock = {
    monotonicTimeNanosUnsafe: () => process.hrtime.bigint(),
    monotonicTimeNanos: Effect.sync(() => process.hrtime.bigint()),
    sleep: (duration) => Effect.sleep(duration).pipe(Effect.provideService(Clock.Clock, Clock.Clock.defaultValue())),
    currentTimeMillisUnsafe: () => Date.now() + offset,
    currentTimeMillis: Effect.sync(() => Date.now() + offset),
    currentTimeNanosUnsafe: () => BigInt(Date.now() + offset) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(Date.now() + offset) * 1_000_000n)
  }
  return { clock, advance: (millis: number) => void (offset += millis) }
}

/** A POST under HubPersonAuth, for testing the middleware's cross-site rule: answers the person. */
class ProbeGroup extends HttpApiGroup.make("probe")
  .add(
    HttpApiEndpoint.post("change", "/api/v1/test/change", {
      success: Schema.Struct({ data: Schema.Struct({ email: Schema.String }) })
    })
  )
  .middleware(HubPersonAuth) {}

const TestApi = HttpApi.make("hub").add(ProbeGroup)
const TestSignInApi = SignInApi.add(ProbeGroup)

const probeHandlers = HttpApiBuilder.group(TestApi, "probe", (handlers) =>
  Effect.succeed(handlers.handle("change", () => Effect.map(CurrentPerson, (p) => ({ data: { email: p.email } }))))
)

export interface SignInStackOptions {
  readonly smtp: SmtpTestServer
  /** `sql` runs the stores on a freshly migrated database of the backend; memory otherwise. */
  readonly backend?: SqlBackend | undefined
  readonly perAddress?: number
  readonly perClient?: number
  readonly contextKeys?: ContextKeys
  readonly secretsKey?: string | undefined
}

export const defaultContextKeys = (): ContextKeys => {
  const parsed = parseContextKeys(`meeting-recaps:${recapsContextKey},tasks:${tasksContextKey}`)
  if (parsed._tag !== "Success") throw new Error("test context keys")
  return parsed.success
}

/**
 * The hub's sign-in routes on a loopback port (the public URL is that address): sessions, email and viewer
 * links, the mail worker sending through the test SMTP server. Answers the base URL, the directory, the
 * outbox, the queue of link requests and units of work over the stores.
 */
export const serveSignIn = (options: SignInStackOptions) =>
  Effect.gen(function* () {
    const storage =
      options.backend === undefined
        ? Layer.mergeAll(DirectoryMemory, HubSignInStoresMemory).pipe(Layer.provideMerge(TransactionsMemory))
        : Layer.mergeAll(DirectorySql, HubSignInStoresSql).pipe(
            Layer.provideMerge(TransactionsSql),
            Layer.provide(migrationsLayer("hub", hubMigrations)),
            Layer.provide(options.backend.layer)
          )
    const ports = yield* Layer.build(Layer.merge(storage, IdGeneratorUlid))
    // The links name the listener, so its port is chosen first.
    const port = yield* Effect.promise(freePort)
    const publicUrl = `http://127.0.0.1:${port}`
    const signIn = HubSignInLayer({
      publicUrl,
      sessions: { idleMillis: 60 * 60_000, maxMillis: 24 * 60 * 60_000 },
      emailLinkMillis: 15 * 60_000,
      viewerLinkMillis: 72 * 60 * 60_000,
      secretsKey: "secretsKey" in options ? options.secretsKey : hubSecretsKey,
      mailRetrySeconds: [1]
    }).pipe(Layer.provide(MailerSmtp({ url: Redacted.make(options.smtp.url), from: "Hub <hub@example.test>" })))
    const services = yield* Layer.build(
      Layer.merge(signIn, HubSignInWorkers(50).pipe(Layer.provide(signIn))).pipe(
        Layer.provide(Layer.succeedContext(ports))
      )
    )
    const routes = serviceRoutes({
      api: TestSignInApi,
      handlers: Layer.mergeAll(
        EmailSignInHandlers({
          publicUrl,
          perAddress: options.perAddress ?? 100,
          perClient: options.perClient ?? 1000,
          windowMillis: 15 * 60_000
        }),
        MeHandlers,
        ViewerLinkHandlers({ contextKeys: options.contextKeys ?? defaultContextKeys(), requestsPerMinute: 1000 }),
        probeHandlers
      ).pipe(Layer.provide(HubPersonAuthLayer({ publicUrl }))),
      errors: { dialect: "hub", maxBodyBytes: 64 * 1024 }
    }).pipe(Layer.provide(Layer.succeedContext(services)), Layer.provide(Layer.succeedContext(ports)))
    yield* serveForTest(routes, { port })
    return {
      baseUrl: publicUrl,
      directory: Context.get(ports, Directory),
      outbox: Context.get(ports, MailOutbox),
      requests: Context.get(ports, SignInRequestStore),
      transactions: Context.get(ports, Transactions)
    }
  })

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })
