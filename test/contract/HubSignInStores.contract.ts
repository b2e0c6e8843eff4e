import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import { MailOutbox } from "../../core/hub/MailOutbox.ts"
import { SessionStore, type SessionRecord } from "../../core/hub/Sessions.ts"
import { SignInRequestStore, type SignInRequest } from "../../core/hub/SignInRequestStore.ts"
import { ExternalViewerStore, SignInTokenStore, type SignInToken } from "../../core/hub/SignInTokenStore.ts"
import { Transactions } from "../../core/kernel/Transactions.ts"

export type HubSignInStores =
  SessionStore | SignInTokenStore | SignInRequestStore | ExternalViewerStore | MailOutbox | Transactions

const at = (minutes: number) => new Date(Date.UTC(2040, 0, 1) + minutes * 60_000).toISOString()
const fresh = (prefix: string) => `${prefix}${randomUUID().replace(/-/g, "")}`

const sessionOf = (fields: Partial<SessionRecord> = {}): SessionRecord => ({
  id: fresh("ses_"),
  idHash: fresh("h"),
  userId: fresh("usr_"),
  createdAt: at(0),
  lastSeenAt: at(0),
  expiresAt: at(60),
  ...fields
})

const tokenOf = (fields: Partial<SignInToken> = {}): SignInToken => ({
  tokenHash: fresh("t"),
  userId: fresh("usr_"),
  purpose: "email",
  next: null,
  createdAt: at(0),
  expiresAt: at(15),
  browserHash: null,
  ...fields
})

let requestsMade = 0
const requestOf = (fields: Partial<SignInRequest> = {}): SignInRequest => ({
  // Ids sort in the order made, as ULIDs do.
  id: `req_${String(++requestsMade).padStart(6, "0")}_${fresh("")}`,
  email: `${fresh("p")}@example.test`,
  next: null,
  browserHash: fresh("b"),
  createdAt: at(0),
  ...fields
})

/** Sessions, sign-in links, external viewers and the mail outbox, against one adapter family. */
export const HubSignInStoresContract = (name: string, stores: Layer.Layer<HubSignInStores, unknown>) => {
  layer(stores, { timeout: "60 seconds" })(`hub sign-in stores (${name})`, (it) => {
    describe("SessionStore", () => {
      it.effect("creates, finds by hash, touches forward only, and removes", () =>
        Effect.gen(function* () {
          const store = yield* SessionStore
          const session = sessionOf()
          yield* store.create(session)
          assert.deepStrictEqual(yield* store.find(session.idHash), session)
          assert.strictEqual(yield* store.find(fresh("h")), undefined)
          yield* store.touch(session.idHash, at(5))
          yield* store.touch(session.idHash, at(2))
          assert.strictEqual((yield* store.find(session.idHash))?.lastSeenAt, at(5))
          assert.isTrue(yield* store.remove(session.idHash))
          assert.isFalse(yield* store.remove(session.idHash))
          assert.strictEqual(yield* store.find(session.idHash), undefined)
        })
      )

      it.effect("purges idle and expired sessions and keeps live ones", () =>
        Effect.gen(function* () {
          const store = yield* SessionStore
          const idle = sessionOf({ lastSeenAt: at(1000), expiresAt: at(5000) })
          const expired = sessionOf({ lastSeenAt: at(1990), expiresAt: at(2000) })
          const live = sessionOf({ lastSeenAt: at(1990), expiresAt: at(5000) })
          for (const s of [idle, expired, live]) yield* store.create(s)
          assert.isAtLeast(yield* store.purge(at(1500), at(2000)), 2)
          assert.strictEqual(yield* store.find(idle.idHash), undefined)
          assert.strictEqual(yield* store.find(expired.idHash), undefined)
          assert.deepStrictEqual(yield* store.find(live.idHash), live)
        })
      )
    })

    describe("SignInTokenStore", () => {
      it.effect("redeems a token once, before it expires", () =>
        Effect.gen(function* () {
          const store = yield* SignInTokenStore
          const token = tokenOf({ next: "/apps/decisions/inbox?x=1" })
          yield* store.insert(token)
          assert.deepStrictEqual(yield* store.redeem(token.tokenHash, at(1)), token)
          assert.strictEqual(yield* store.redeem(token.tokenHash, at(2)), undefined)
          const late = tokenOf()
          yield* store.insert(late)
          assert.strictEqual(yield* store.redeem(late.tokenHash, at(15)), undefined)
          assert.strictEqual(yield* store.redeem(fresh("t"), at(1)), undefined)
        })
      )

      it.effect("of concurrent redemptions of one token exactly one succeeds", () =>
        Effect.gen(function* () {
          const store = yield* SignInTokenStore
          const token = tokenOf()
          yield* store.insert(token)
          const answers = yield* Effect.all(
            Array.from({ length: 8 }, () => store.redeem(token.tokenHash, at(1))),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(answers.filter((a) => a !== undefined).length, 1)
        })
      )

      it.effect("revokes the user's unused tokens of one purpose only", () =>
        Effect.gen(function* () {
          const store = yield* SignInTokenStore
          const userId = fresh("usr_")
          const first = tokenOf({ userId, purpose: "viewer", expiresAt: at(10_000) })
          const second = tokenOf({ userId, purpose: "viewer", expiresAt: at(10_000) })
          const email = tokenOf({ userId, purpose: "email" })
          const other = tokenOf({ purpose: "viewer", expiresAt: at(10_000) })
          for (const t of [first, second, email, other]) yield* store.insert(t)
          assert.strictEqual(yield* store.revokeUnused(userId, "viewer", at(1)), 2)
          assert.strictEqual(yield* store.redeem(first.tokenHash, at(2)), undefined)
          assert.strictEqual(yield* store.redeem(second.tokenHash, at(2)), undefined)
          assert.deepStrictEqual(yield* store.redeem(email.tokenHash, at(2)), email)
          assert.deepStrictEqual(yield* store.redeem(other.tokenHash, at(2)), other)
        })
      )

      it.effect("purges tokens that expired before the cut-off", () =>
        Effect.gen(function* () {
          const store = yield* SignInTokenStore
          const old = tokenOf({ createdAt: at(-100), expiresAt: at(-50) })
          const current = tokenOf()
          yield* store.insert(old)
          yield* store.insert(current)
          assert.isAtLeast(yield* store.purge(at(-10)), 1)
          assert.deepStrictEqual(yield* store.redeem(current.tokenHash, at(1)), current)
        })
      )
    })

    describe("SignInTokenStore (finding and counting)", () => {
      it.effect("finds an unused, unexpired token without spending it, with the asking browser's hash", () =>
        Effect.gen(function* () {
          const store = yield* SignInTokenStore
          const token = tokenOf({ browserHash: fresh("b") })
          yield* store.insert(token)
          assert.deepStrictEqual(yield* store.find(token.tokenHash, at(1)), token)
          assert.deepStrictEqual(yield* store.find(token.tokenHash, at(2)), token)
          assert.strictEqual(yield* store.find(token.tokenHash, at(15)), undefined)
          assert.deepStrictEqual(yield* store.redeem(token.tokenHash, at(3)), token)
          assert.strictEqual(yield* store.find(token.tokenHash, at(4)), undefined)
          assert.strictEqual(yield* store.find(fresh("t"), at(1)), undefined)
        })
      )

      it.effect("counts a user's tokens of one purpose made since a time, used or not", () =>
        Effect.gen(function* () {
          const store = yield* SignInTokenStore
          const transactions = yield* Transactions
          const userId = fresh("usr_")
          const tokens = [
            tokenOf({ userId, createdAt: at(-61), expiresAt: at(-46) }),
            tokenOf({ userId, createdAt: at(-30), expiresAt: at(-15) }),
            tokenOf({ userId, createdAt: at(-1), expiresAt: at(14) }),
            tokenOf({ userId, purpose: "viewer", createdAt: at(-1), expiresAt: at(100) }),
            tokenOf({ createdAt: at(-1) })
          ]
          for (const t of tokens) yield* store.insert(t)
          yield* store.redeem(tokens[2]!.tokenHash, at(0))
          assert.strictEqual(yield* transactions.atomically(store.countIssuedSince(userId, "email", at(-60))), 2)
          assert.strictEqual(yield* transactions.atomically(store.countIssuedSince(userId, "viewer", at(-60))), 1)
          assert.strictEqual(yield* transactions.atomically(store.countIssuedSince(fresh("usr_"), "email", at(-60))), 0)
        })
      )
    })

    describe("SignInRequestStore", () => {
      const drain = Effect.gen(function* () {
        const store = yield* SignInRequestStore
        while ((yield* store.takeOldest()) !== undefined) {
          /* left by an earlier test */
        }
      })

      it.effect("gives the requests back oldest first, each once", () =>
        Effect.gen(function* () {
          const store = yield* SignInRequestStore
          const transactions = yield* Transactions
          yield* drain
          const requests = [requestOf({ next: "/apps/x?y=1" }), requestOf(), requestOf()]
          for (const r of requests) yield* transactions.atomically(store.add(r))
          assert.strictEqual(yield* store.pendingCount(), 3)
          for (const r of requests) assert.deepStrictEqual(yield* transactions.atomically(store.takeOldest()), r)
          assert.strictEqual(yield* transactions.atomically(store.takeOldest()), undefined)
          assert.strictEqual(yield* store.pendingCount(), 0)
        })
      )

      it.effect("units taking at once never take the same request, and none is lost", () =>
        Effect.gen(function* () {
          const store = yield* SignInRequestStore
          const transactions = yield* Transactions
          yield* drain
          const requests = Array.from({ length: 6 }, () => requestOf())
          for (const r of requests) yield* transactions.atomically(store.add(r))
          const taken = yield* Effect.all(
            Array.from({ length: 10 }, () => transactions.atomically(store.takeOldest())),
            { concurrency: "unbounded" }
          )
          const ids = taken.flatMap((r) => (r === undefined ? [] : [r.id]))
          assert.deepStrictEqual(
            ids.toSorted(),
            requests.map((r) => r.id)
          )
        })
      )
    })

    describe("ExternalViewerStore", () => {
      it.effect("adds a viewer once and finds it", () =>
        Effect.gen(function* () {
          const store = yield* ExternalViewerStore
          const viewer = { userId: fresh("usr_"), invitedByEmail: "host@example.com", createdAt: at(0) }
          assert.isTrue(yield* store.add(viewer))
          assert.isFalse(yield* store.add({ ...viewer, invitedByEmail: "other@example.com" }))
          assert.deepStrictEqual(yield* store.find(viewer.userId), viewer)
          assert.strictEqual(yield* store.find(fresh("usr_")), undefined)
        })
      )
    })

    describe("MailOutbox", () => {
      it.effect("claims due mail once per lease, retries later, and forgets sent and failed mail", () =>
        Effect.gen(function* () {
          const outbox = yield* MailOutbox
          const base = yield* outbox.pendingCount()
          const a = { id: fresh("m"), sealed: "v1.sealed-a", createdAt: at(0) }
          const b = { id: fresh("m"), sealed: "v1.sealed-b", createdAt: at(0) }
          const c = { id: fresh("m"), sealed: "v1.sealed-c", createdAt: at(0) }
          for (const m of [a, b, c]) yield* outbox.enqueue(m)
          assert.strictEqual(yield* outbox.pendingCount(), base + 3)
          const ours = (claimed: ReadonlyArray<{ id: string }>) =>
            claimed
              .filter((m) => [a.id, b.id, c.id].includes(m.id))
              .map((m) => m.id)
              .sort()
          const first = yield* outbox.claim(at(1), at(3), 1000)
          assert.deepStrictEqual(ours(first), [a.id, b.id, c.id].sort())
          assert.deepInclude(first, { id: a.id, sealed: a.sealed, attempts: 0 })
          // Leased: nobody else gets them until the lease ends.
          assert.deepStrictEqual(ours(yield* outbox.claim(at(2), at(4), 1000)), [])
          yield* outbox.markSent(a.id, at(2))
          yield* outbox.markFailed(b.id, at(2))
          yield* outbox.retryAt(c.id, at(10))
          assert.deepStrictEqual(ours(yield* outbox.claim(at(5), at(6), 1000)), [])
          const again = yield* outbox.claim(at(10), at(12), 1000)
          assert.deepStrictEqual(ours(again), [c.id])
          assert.deepInclude(again, { id: c.id, sealed: c.sealed, attempts: 1 })
          assert.strictEqual(yield* outbox.pendingCount(), base + 1)
          yield* outbox.markSent(c.id, at(11))
          assert.strictEqual(yield* outbox.pendingCount(), base)
        })
      )

      it.effect("an expired lease makes the mail claimable again", () =>
        Effect.gen(function* () {
          const outbox = yield* MailOutbox
          const m = { id: fresh("m"), sealed: "v1.sealed", createdAt: at(100) }
          yield* outbox.enqueue(m)
          assert.isTrue((yield* outbox.claim(at(100), at(101), 1000)).some((x) => x.id === m.id))
          assert.isTrue((yield* outbox.claim(at(101), at(102), 1000)).some((x) => x.id === m.id))
          yield* outbox.markSent(m.id, at(101))
        })
      )
    })
  })
}
