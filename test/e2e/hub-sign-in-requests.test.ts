import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer } from "effect"
import { SqlClient, Statement } from "effect/sql"
import { DirectorySql } from "../../adapters/sql/hub/DirectorySql.ts"
import { SignInRequestStoreSql } from "../../adapters/sql/hub/SignInRequestStoreSql.ts"
import { hubMigrations } from "../../adapters/sql/hub/migrations.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import { HubSignInLayer, HubSignInStoresSql } from "../../apps/server/hub/HubSignInRuntime.ts"
import { hashSecret } from "../../core/auth/IssuedSecret.ts"
import { Directory } from "../../core/hub/Directory.ts"
import { MailOutbox } from "../../core/hub/MailOutbox.ts"
import { newBrowserNonce, SignInLinks } from "../../core/hub/SignInLinks.ts"
import { SignInRequestStore } from "../../core/hub/SignInRequestStore.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"
import { Mailer } from "../../core/kernel/Mailer.ts"
import { Transactions } from "../../core/kernel/Transactions.ts"
import { sqlBackends } from "../support/Databases.ts"
import { hubSecretsKey } from "../support/HubSignIn.ts"

/** Every call out to the mail server, counted. */
let mailerCalls = 0
const CountingMailer = Layer.succeed(Mailer)(Mailer.of({ send: () => Effect.sync(() => void mailerCalls++) }))

const tables = ["sign_in_requests", "sign_in_tokens", "mail_outbox", "sessions", "users"] as const

/** The rows of each sign-in table. */
const rowCounts = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const counts: Record<string, number> = {}
  for (const table of tables) {
    const rows = yield* sql<{ readonly count: number }>`SELECT count(*)::int AS count FROM ${sql(`hub.${table}`)}`
    counts[table] = rows[0]!.count
  }
  return counts
})

/**
 * The work of asking for a link for `email`, as the request's handler asks for it: the SQL statements it
 * issued (their text, in order), the rows it added to each table, and its calls out to the mail server. No
 * worker runs here, so all of it is the request's own.
 */
const workOf = (email: string) =>
  Effect.gen(function* () {
    const links = yield* SignInLinks
    const statements: Array<string> = []
    const record: Statement.Transformer = (statement) =>
      Effect.sync(() => {
        statements.push(statement.compile()[0])
        return statement
      })
    const before = yield* rowCounts
    const calls = mailerCalls
    yield* links
      .requestEmailLink(email, "/apps/x", hashSecret(newBrowserNonce().plaintext))
      .pipe(Effect.provideService(Statement.CurrentTransformer, record))
    const after = yield* rowCounts
    return {
      statements,
      written: Object.fromEntries(tables.map((table) => [table, after[table]! - before[table]!])),
      mailerCalls: mailerCalls - calls
    }
  })

for (const backend of sqlBackends) {
  const stack = HubSignInLayer({
    publicUrl: "https://hub.example",
    sessions: { idleMillis: 60 * 60_000, maxMillis: 24 * 60 * 60_000 },
    emailLinkMillis: 15 * 60_000,
    viewerLinkMillis: 60 * 60_000,
    secretsKey: hubSecretsKey
  }).pipe(
    Layer.provideMerge(Layer.mergeAll(DirectorySql, HubSignInStoresSql, CountingMailer, IdGeneratorUlid)),
    Layer.provideMerge(TransactionsSql),
    Layer.provide(migrationsLayer("hub", hubMigrations)),
    Layer.provideMerge(backend.layer)
  )

  layer(stack, { timeout: "60 seconds" })(
    `sign-in requests for known and unknown addresses (${backend.name})`,
    (it) => {
      describe("the request's work", () => {
        it.effect("is the same statements, the same rows written and the same calls out, known address or not", () =>
          Effect.gen(function* () {
            yield* (yield* Directory).createUser({
              id: "usr_known",
              email: "known@example.test",
              name: "Known",
              verified: true,
              createdAt: new Date().toISOString()
            })
            const known = yield* workOf("known@example.test")
            const unknown = yield* workOf("unknown@example.test")
            assert.isAbove(known.statements.length, 0)
            assert.deepStrictEqual(unknown.statements, known.statements)
            assert.deepStrictEqual(unknown.written, known.written)
            assert.deepStrictEqual(known.written, {
              sign_in_requests: 1,
              sign_in_tokens: 0,
              mail_outbox: 0,
              sessions: 0,
              users: 0
            })
            assert.strictEqual(known.mailerCalls, 0)
            assert.strictEqual(unknown.mailerCalls, 0)
          })
        )
      })

      describe("the worker", () => {
        it.effect("a worker that dies before its unit commits leaves the request; the next sends its link once", () =>
          Effect.gen(function* () {
            const links = yield* SignInLinks
            const requests = yield* SignInRequestStore
            const transactions = yield* Transactions
            const outbox = yield* MailOutbox
            yield* (yield* Directory).createUser({
              id: "usr_crash",
              email: "crash@example.test",
              name: "Crash",
              verified: true,
              createdAt: new Date().toISOString()
            })
            yield* links.sendRequested()
            const queued = yield* outbox.pendingCount()
            yield* links.requestEmailLink("crash@example.test", undefined, hashSecret(newBrowserNonce().plaintext))
            const died = yield* Effect.exit(
              transactions.atomically(Effect.andThen(requests.takeOldest(), Effect.die("the worker's process ended")))
            )
            assert.isTrue(Exit.isFailure(died))
            assert.strictEqual(yield* requests.pendingCount(), 1)
            assert.strictEqual(yield* links.sendRequested(), 1)
            assert.strictEqual(yield* requests.pendingCount(), 0)
            assert.strictEqual(yield* outbox.pendingCount(), queued + 1)
            assert.strictEqual(yield* links.sendRequested(), 0)
            assert.strictEqual(yield* outbox.pendingCount(), queued + 1)
          })
        )

        if (backend.name === "postgres") {
          it.effect("a request added on one instance wakes the worker of another", () =>
            Effect.scoped(
              Effect.gen(function* () {
                const here = yield* SignInRequestStore
                const transactions = yield* Transactions
                // Another instance's store on the same database, with its own LISTEN.
                const there = Context.get(
                  yield* Layer.build(Layer.fresh(SignInRequestStoreSql).pipe(Layer.provide(TransactionsSql))),
                  SignInRequestStore
                )
                // Its first wake-up comes once it listens (what was added before is looked for then).
                yield* there.awaitAdded(60_000)
                const woken = yield* Effect.forkChild(there.awaitAdded(60_000))
                yield* transactions.atomically(
                  here.add({
                    id: "01JZZZZZZZZZZZZZZZZZZZZZZZ",
                    email: "nobody@example.test",
                    next: null,
                    browserHash: hashSecret(newBrowserNonce().plaintext),
                    createdAt: new Date().toISOString()
                  })
                )
                // The test clock never reaches the 60 s: only the notification ends the wait.
                yield* Fiber.join(woken)
              })
            )
          )
        }
      })
    }
  )
}
