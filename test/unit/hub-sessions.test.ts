import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { MailerMemory, MailerRecordings } from "../../adapters/memory/MailerMemory.ts"
import { DirectoryMemory } from "../../adapters/memory/hub/DirectoryMemory.ts"
import { MailOutboxMemory } from "../../adapters/memory/hub/MailOutboxMemory.ts"
import { SessionStoreMemory } from "../../adapters/memory/hub/SessionStoreMemory.ts"
import { TransactionsMemory } from "../../adapters/memory/TransactionsMemory.ts"
import { open } from "../../core/auth/SecretBox.ts"
import { Directory } from "../../core/hub/Directory.ts"
import { MailDeliveries } from "../../core/hub/MailDeliveries.ts"
import { MailOutbox } from "../../core/hub/MailOutbox.ts"
import { SessionStore, Sessions } from "../../core/hub/Sessions.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"
import { Transactions } from "../../core/kernel/Transactions.ts"
import { fixedJitter } from "../support/FixedJitter.ts"

const minute = 60_000
const policy = { idleMillis: 30 * minute, maxMillis: 120 * minute }

const sessionsStack = Sessions.layer(policy).pipe(
  Layer.provideMerge(Layer.mergeAll(SessionStoreMemory, DirectoryMemory, IdGeneratorUlid))
)

const addAda = Effect.gen(function* () {
  yield* (yield* Directory).createUser({
    id: "usr_ada",
    email: "ada@example.test",
    name: "Ada",
    verified: true,
    createdAt: new Date(0).toISOString()
  })
  return "usr_ada"
})

describe("hub sessions", () => {
  it.effect("a session names its person until it is idle too long", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const started = yield* sessions.start(yield* addAda)
      assert.match(started.cookieValue, /^hs_[A-Za-z0-9_-]{43}$/)
      assert.deepStrictEqual(yield* sessions.find(started.cookieValue), {
        userId: "usr_ada",
        email: "ada@example.test",
        name: "Ada",
        sessionId: started.sessionId
      })
      // Used every 20 minutes, it lives on past the idle limit...
      for (let i = 0; i < 4; i++) {
        yield* TestClock.adjust(20 * minute)
        assert.isDefined(yield* sessions.find(started.cookieValue))
      }
      // ...and ends once not used for 30 minutes.
      yield* TestClock.adjust(30 * minute)
      assert.isUndefined(yield* sessions.find(started.cookieValue))
    }).pipe(Effect.provide(sessionsStack))
  )

  it.effect("a session ends at its absolute end however active, and at logout", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const userId = yield* addAda
      const started = yield* sessions.start(userId)
      for (let i = 0; i < 5; i++) {
        yield* TestClock.adjust(20 * minute)
        assert.isDefined(yield* sessions.find(started.cookieValue))
      }
      yield* TestClock.adjust(20 * minute)
      assert.isUndefined(yield* sessions.find(started.cookieValue))

      const other = yield* sessions.start(userId)
      assert.notStrictEqual(other.cookieValue, started.cookieValue)
      yield* sessions.end(other.cookieValue)
      assert.isUndefined(yield* sessions.find(other.cookieValue))
      assert.isUndefined(yield* sessions.find("not a cookie"))
    }).pipe(Effect.provide(sessionsStack))
  )

  it.effect("only the hash of the cookie is stored; the purge forgets ended sessions", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const store = yield* SessionStore
      const started = yield* sessions.start(yield* addAda)
      const { hashSecret } = yield* Effect.promise(() => import("../../core/auth/IssuedSecret.ts"))
      const stored = yield* store.find(hashSecret(started.cookieValue))
      assert.isDefined(stored)
      assert.notInclude(JSON.stringify(stored), started.cookieValue)
      yield* TestClock.adjust(31 * minute)
      assert.strictEqual(yield* sessions.purge, 1)
      assert.isUndefined(yield* store.find(hashSecret(started.cookieValue)))
    }).pipe(Effect.provide(sessionsStack))
  )
})

const secretsKey = "mail-secrets-key-0123456789abcdef"
const message = { to: "ada@example.test", subject: "Hi", text: "link https://x/y", html: "<p>link</p>" }

const mailStack = (key: string | undefined) =>
  MailDeliveries.layer({ secretsKey: key, retrySeconds: [10, 60] }).pipe(
    Layer.provideMerge(Layer.mergeAll(MailOutboxMemory, MailerMemory, IdGeneratorUlid, TransactionsMemory)),
    Layer.provideMerge(fixedJitter(0.5))
  )

describe("mail deliveries through the outbox", () => {
  it.effect("queues the message sealed, sends it once, retries a transient failure, gives up on a permanent one", () =>
    Effect.gen(function* () {
      const mail = yield* MailDeliveries
      const outbox = yield* MailOutbox
      const recordings = yield* MailerRecordings
      yield* (yield* Transactions).atomically(mail.enqueue(message))
      // What waits is sealed with the secrets key: the link is not readable at rest.
      // (A lease that ends at once leaves it claimable.)
      const [queued] = yield* outbox.claim(new Date(0).toISOString(), new Date(0).toISOString(), 10)
      assert.notInclude(queued!.sealed, "https://x/y")
      assert.deepStrictEqual(JSON.parse(open(secretsKey, queued!.sealed)!), message)

      yield* recordings.failWith("transient")
      assert.strictEqual(yield* mail.runDue(), 1)
      assert.strictEqual(yield* outbox.pendingCount(), 1)
      assert.strictEqual(yield* mail.runDue(), 0)
      yield* recordings.failWith(undefined)
      // The first retry waits 10 s plus an eighth of it (a jitter of one half adds up to a quarter).
      yield* TestClock.adjust(11_249)
      assert.strictEqual(yield* mail.runDue(), 0)
      yield* TestClock.adjust(1)
      assert.strictEqual(yield* mail.runDue(), 1)
      assert.deepStrictEqual(yield* recordings.sent(), [message])
      assert.strictEqual(yield* outbox.pendingCount(), 0)
      assert.strictEqual(yield* mail.runDue(), 0)

      yield* mail.enqueue({ ...message, subject: "Refused" })
      yield* recordings.failWith("permanent")
      assert.strictEqual(yield* mail.runDue(), 1)
      assert.strictEqual(yield* outbox.pendingCount(), 0)
    }).pipe(Effect.provide(mailStack(secretsKey)))
  )

  it.effect("retries run out: the message is given up after the last one", () =>
    Effect.gen(function* () {
      const mail = yield* MailDeliveries
      const outbox = yield* MailOutbox
      yield* (yield* MailerRecordings).failWith("transient")
      yield* mail.enqueue(message)
      for (const wait of [0, 11_250, 67_500]) {
        yield* TestClock.adjust(wait)
        assert.strictEqual(yield* mail.runDue(), 1)
      }
      assert.strictEqual(yield* outbox.pendingCount(), 0)
    }).pipe(Effect.provide(mailStack(secretsKey)))
  )

  it.effect("without a secrets key nothing is queued (fails closed)", () =>
    Effect.gen(function* () {
      const mail = yield* MailDeliveries
      assert.isFalse(mail.configured)
      const refused = yield* Effect.flip(mail.enqueue(message))
      assert.strictEqual(refused._tag, "NotConfigured")
      assert.strictEqual(yield* (yield* MailOutbox).pendingCount(), 0)
    }).pipe(Effect.provide(mailStack(undefined)))
  )
})
