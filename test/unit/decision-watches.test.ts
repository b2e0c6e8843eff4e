import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Exit, Fiber, Scope } from "effect"
import { TestClock } from "effect/testing"
import { makeInProcessSignals } from "../../core/kernel/InProcessSignals.ts"
import { makeDecisionWatches } from "../../core/decisions/DecisionWatches.ts"

interface Row {
  readonly organizationId: string
  status: string
  expiresAt?: number
}

interface Read {
  readonly id: string
  readonly status: string
  readonly expiresAt: number | undefined
}

/**
 * Watches over a table of decisions in memory: every read is counted, a row past its `expiresAt` reads as
 * expired (as the decisions service settles expiry on read), and `beforeRead` runs inside a read, after it
 * has begun (to change the row meanwhile).
 */
const setUp = Effect.gen(function* () {
  const signals = yield* makeInProcessSignals
  const rows = new Map<string, Row>()
  const counts = { reads: 0, subscriptions: 0 }
  let beforeRead: (read: number) => Effect.Effect<void> = () => Effect.void
  const watches = yield* makeDecisionWatches({
    subscribe: (id) =>
      Effect.acquireRelease(
        Effect.sync(() => void counts.subscriptions++),
        () => Effect.sync(() => void counts.subscriptions--)
      ).pipe(Effect.andThen(signals.subscribe(id))),
    read: (organizationId, id) =>
      Effect.gen(function* () {
        const read = ++counts.reads
        const now = yield* Clock.currentTimeMillis
        const row = rows.get(id)
        if (row === undefined || row.organizationId !== organizationId) return yield* Effect.fail("NotFound" as const)
        const status = row.expiresAt !== undefined && row.expiresAt <= now ? "expired" : row.status
        const answer: Read = { id, status, expiresAt: row.expiresAt }
        yield* beforeRead(read)
        return answer
      }),
    statusOf: (read) => read.status,
    changesAt: (read) => (read.status === "pending" ? read.expiresAt : undefined)
  })
  /** A committed change: the row's new status, then its wake-up. */
  const change = (id: string, status: string) =>
    Effect.andThen(
      Effect.sync(() => void (rows.get(id)!.status = status)),
      signals.wake(id)
    )
  /** Polls (no time passes) until `n` waiters of the decision hold on for a change. */
  const holding = (organizationId: string, id: string, n: number) =>
    Effect.gen(function* () {
      while (watches.waiting(organizationId, id) !== n) yield* Effect.yieldNow
    })
  return {
    watches,
    rows,
    counts,
    change,
    holding,
    wake: signals.wake,
    onRead: (f: (read: number) => Effect.Effect<void>) => void (beforeRead = f)
  }
})

const forever = Number.MAX_SAFE_INTEGER

const waitAll = <A, E>(fibers: ReadonlyArray<Fiber.Fiber<A, E>>) => Effect.forEach(fibers, Fiber.join)

describe("decision watches (one per decision, shared by its long-poll waiters)", () => {
  it.effect("a change is read once and answers every waiter of the decision", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const t = yield* setUp
        t.rows.set("d1", { organizationId: "acme", status: "pending" })
        const waiters = yield* Effect.forEach(Array.from({ length: 200 }), () =>
          Effect.forkChild(t.watches.wait("acme", "d1", forever, Effect.never))
        )
        yield* t.holding("acme", "d1", 200)
        assert.isAtMost(t.counts.reads, 200, "first reads are shared by waiters that join before one begins")
        assert.strictEqual(t.counts.subscriptions, 1, "one subscription for the decision, not one per waiter")
        const before = t.counts.reads

        yield* t.change("d1", "resolved")
        const answers = yield* waitAll(waiters)

        assert.deepStrictEqual(new Set(answers.map((a) => a.status)), new Set(["resolved"]))
        assert.strictEqual(t.counts.reads - before, 1, "one read for the change, whatever the number of waiters")
        assert.strictEqual(t.watches.waiting("acme", "d1"), 0)
        // The watch stops with its last waiter, and lets go of its subscription.
        while (t.counts.subscriptions > 0) yield* Effect.yieldNow
      })
    )
  )

  it.effect("each decision's change is read once, and wakes only that decision's waiters", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const t = yield* setUp
        const ids = ["d1", "d2", "d3"]
        for (const id of ids) t.rows.set(id, { organizationId: "acme", status: "pending" })
        const waiters = new Map(
          yield* Effect.forEach(ids, (id) =>
            Effect.map(
              Effect.forEach(Array.from({ length: 20 }), () =>
                Effect.forkChild(t.watches.wait("acme", id, forever, Effect.never))
              ),
              (fibers) => [id, fibers] as const
            )
          )
        )
        for (const id of ids) yield* t.holding("acme", id, 20)
        const before = t.counts.reads

        yield* t.change("d1", "resolved")
        yield* t.change("d2", "needs_info")
        assert.deepStrictEqual(
          (yield* waitAll(waiters.get("d1")!)).map((a) => a.status),
          Array(20).fill("resolved")
        )
        assert.deepStrictEqual(
          (yield* waitAll(waiters.get("d2")!)).map((a) => a.status),
          Array(20).fill("needs_info")
        )
        assert.strictEqual(t.counts.reads - before, 2)
        assert.strictEqual(t.watches.waiting("acme", "d3"), 20, "d3 did not change: its waiters wait on")
        yield* Effect.forEach(waiters.get("d3")!, Fiber.interrupt)
        while (t.counts.subscriptions > 0) yield* Effect.yieldNow
      })
    )
  )

  it.effect("a wake-up that leaves the status as it was answers nobody: the waiters wait on", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const t = yield* setUp
        t.rows.set("d1", { organizationId: "acme", status: "pending" })
        const waiters = yield* Effect.forEach(Array.from({ length: 10 }), () =>
          Effect.forkChild(t.watches.wait("acme", "d1", forever, Effect.never))
        )
        yield* t.holding("acme", "d1", 10)
        const before = t.counts.reads

        yield* t.change("d1", "pending")
        while (t.counts.reads === before) yield* Effect.yieldNow
        yield* Effect.yieldNow
        assert.strictEqual(t.watches.waiting("acme", "d1"), 10)
        assert.isTrue(waiters.every((fiber) => fiber.pollUnsafe() === undefined))

        yield* t.change("d1", "needs_info")
        assert.deepStrictEqual(
          (yield* waitAll(waiters)).map((a) => a.status),
          Array(10).fill("needs_info")
        )
        assert.strictEqual(t.counts.reads - before, 2)
      })
    )
  )

  it.effect("a waiter holds on from its own first read: one that joins after a change waits for the next", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const t = yield* setUp
        t.rows.set("d1", { organizationId: "acme", status: "pending" })
        const early = yield* Effect.forkChild(t.watches.wait("acme", "d1", forever, Effect.never))
        yield* t.holding("acme", "d1", 1)
        yield* t.change("d1", "needs_info")
        assert.strictEqual((yield* Fiber.join(early)).status, "needs_info")

        const late = yield* Effect.forkChild(t.watches.wait("acme", "d1", forever, Effect.never))
        yield* t.holding("acme", "d1", 1)
        const before = t.counts.reads
        yield* t.wake("d1")
        while (t.counts.reads === before) yield* Effect.yieldNow
        yield* t.holding("acme", "d1", 1)
        assert.isUndefined(late.pollUnsafe(), "needs_info is where the late waiter started: it holds on")
        yield* t.change("d1", "pending")
        assert.strictEqual((yield* Fiber.join(late)).status, "pending")
      })
    )
  )

  it.effect("waiters who join while no change has come since the last read share that read", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const t = yield* setUp
        t.rows.set("d1", { organizationId: "acme", status: "pending" })
        const first = yield* Effect.forkChild(t.watches.wait("acme", "d1", forever, Effect.never))
        yield* t.holding("acme", "d1", 1)
        assert.strictEqual(t.counts.reads, 1)
        const crowd = yield* Effect.forEach(Array.from({ length: 100 }), () =>
          Effect.forkChild(t.watches.wait("acme", "d1", forever, Effect.never))
        )
        yield* t.holding("acme", "d1", 101)
        assert.strictEqual(t.counts.reads, 1, "no change came: the watch's read is the current state")

        // A read stands for the current state for a short while only (a notification may be lost).
        yield* TestClock.adjust("2 seconds")
        const later = yield* Effect.forkChild(t.watches.wait("acme", "d1", forever, Effect.never))
        yield* t.holding("acme", "d1", 102)
        assert.strictEqual(t.counts.reads, 2)

        yield* t.change("d1", "resolved")
        const answers = yield* waitAll([first, ...crowd, later])
        assert.deepStrictEqual(new Set(answers.map((a) => a.status)), new Set(["resolved"]))
        assert.strictEqual(t.counts.reads, 3)
      })
    )
  )

  it.effect("a change committed while the first read runs is not missed", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const t = yield* setUp
        t.rows.set("d1", { organizationId: "acme", status: "pending" })
        // The first read has begun (it answers pending) when the change commits and signals.
        t.onRead((read) => (read === 1 ? t.change("d1", "resolved") : Effect.void))
        const answer = yield* t.watches.wait("acme", "d1", forever, Effect.never)
        assert.strictEqual(answer.status, "resolved")
        assert.strictEqual(t.counts.reads, 2)
      })
    )
  )

  it.effect("another organization's waiter fails as for a missing decision and learns nothing later", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const t = yield* setUp
        t.rows.set("d1", { organizationId: "acme", status: "pending" })
        const owner = yield* Effect.forkChild(t.watches.wait("acme", "d1", forever, Effect.never))
        yield* t.holding("acme", "d1", 1)

        const stranger = yield* Effect.exit(t.watches.wait("globex", "d1", forever, Effect.never))
        const missing = yield* Effect.exit(t.watches.wait("globex", "nope", forever, Effect.never))
        assert.deepStrictEqual(stranger, Exit.fail("NotFound"))
        assert.deepStrictEqual(missing, Exit.fail("NotFound"))
        assert.strictEqual(t.watches.waiting("globex", "d1"), 0)
        assert.strictEqual(t.watches.waiting("acme", "d1"), 1, "the owner's wait is its own")

        yield* t.change("d1", "resolved")
        assert.strictEqual((yield* Fiber.join(owner)).status, "resolved")
      })
    )
  )

  it.effect("waiters whose waits end together share one read made at that moment", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const t = yield* setUp
        t.rows.set("d1", { organizationId: "acme", status: "pending" })
        const deadline = (yield* Clock.currentTimeMillis) + 30_000
        const waiters = yield* Effect.forEach(Array.from({ length: 50 }), () =>
          Effect.forkChild(t.watches.wait("acme", "d1", deadline, Effect.never))
        )
        yield* t.holding("acme", "d1", 50)
        const before = t.counts.reads
        yield* TestClock.adjust("29 seconds")
        assert.isTrue(waiters.every((fiber) => fiber.pollUnsafe() === undefined))
        yield* TestClock.adjust("1 second")
        const answers = yield* waitAll(waiters)
        assert.deepStrictEqual(
          answers.map((a) => a.status),
          Array(50).fill("pending")
        )
        assert.strictEqual(t.counts.reads - before, 1)
      })
    )
  )

  it.effect("an open decision's expiry answers its waiters with one read, without any signal", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const t = yield* setUp
        const now = yield* Clock.currentTimeMillis
        t.rows.set("d1", { organizationId: "acme", status: "pending", expiresAt: now + 10_000 })
        const waiters = yield* Effect.forEach(Array.from({ length: 20 }), () =>
          Effect.forkChild(t.watches.wait("acme", "d1", now + 60_000, Effect.never))
        )
        yield* t.holding("acme", "d1", 20)
        const before = t.counts.reads
        yield* TestClock.adjust("10 seconds")
        assert.deepStrictEqual(
          (yield* waitAll(waiters)).map((a) => a.status),
          Array(20).fill("expired")
        )
        assert.strictEqual(t.counts.reads - before, 1)
      })
    )
  )

  it.effect("ending early (the server draining) answers every waiter at once with one read of the decision", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const t = yield* setUp
        t.rows.set("d1", { organizationId: "acme", status: "pending" })
        const draining = yield* Deferred.make<void>()
        // One effect for the whole server, as the HTTP adapter hands to every long-poll.
        const drained = Deferred.await(draining)
        const waiters = yield* Effect.forEach(Array.from({ length: 100 }), () =>
          Effect.forkChild(t.watches.wait("acme", "d1", forever, drained))
        )
        yield* t.holding("acme", "d1", 100)
        yield* TestClock.adjust("5 seconds")
        const before = t.counts.reads
        yield* Deferred.succeed(draining, undefined)
        assert.deepStrictEqual(
          (yield* waitAll(waiters)).map((a) => a.status),
          Array(100).fill("pending")
        )
        assert.strictEqual(t.counts.reads - before, 1)
        const late = yield* t.watches.wait("acme", "d1", forever, drained)
        assert.strictEqual(late.status, "pending", "a wait that begins while draining answers at once")
      })
    )
  )

  it.effect("a waiter that ends early on its own answers the decision as it is then; the others hold on", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const t = yield* setUp
        t.rows.set("d1", { organizationId: "acme", status: "pending" })
        const stop = yield* Deferred.make<void>()
        const others = yield* Effect.forEach(Array.from({ length: 3 }), () =>
          Effect.forkChild(t.watches.wait("acme", "d1", forever, Effect.never))
        )
        yield* t.holding("acme", "d1", 3)
        const own = yield* Effect.forkChild(t.watches.wait("acme", "d1", forever, Deferred.await(stop)))
        yield* t.holding("acme", "d1", 4)
        yield* Deferred.succeed(stop, undefined)
        assert.strictEqual((yield* Fiber.join(own)).status, "pending")
        assert.strictEqual(t.watches.waiting("acme", "d1"), 3)
        yield* t.change("d1", "cancelled")
        assert.deepStrictEqual(
          (yield* waitAll(others)).map((a) => a.status),
          Array(3).fill("cancelled")
        )
      })
    )
  )

  it.effect("a waiter whose own end came before its first read answers with that read", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const t = yield* setUp
        t.rows.set("d1", { organizationId: "acme", status: "pending" })
        assert.strictEqual((yield* t.watches.wait("acme", "d1", forever, Effect.void)).status, "pending")
        const holding = yield* Effect.forkChild(t.watches.wait("acme", "d1", forever, Effect.never))
        yield* t.holding("acme", "d1", 1)
        // Joining a watch with a current read, as above but with a waiter already holding on.
        assert.strictEqual((yield* t.watches.wait("acme", "d1", forever, Effect.void)).status, "pending")
        assert.strictEqual(t.watches.waiting("acme", "d1"), 1)
        yield* t.change("d1", "cancelled")
        assert.strictEqual((yield* Fiber.join(holding)).status, "cancelled")
      })
    )
  )

  it.effect("closing the watches ends every wait left (interrupted), none of them answered", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const t = yield* Scope.provide(setUp, scope)
      t.rows.set("d1", { organizationId: "acme", status: "pending" })
      const waiters = yield* Effect.forEach(Array.from({ length: 5 }), () =>
        Effect.forkChild(t.watches.wait("acme", "d1", forever, Effect.never))
      )
      yield* t.holding("acme", "d1", 5)
      yield* Scope.close(scope, Exit.void)
      for (const waiter of waiters) assert.isTrue(Exit.hasInterrupts(yield* Fiber.await(waiter)))
    })
  )

  it.effect("a waiter that goes away leaves; the watch stops with the last one", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const t = yield* setUp
        t.rows.set("d1", { organizationId: "acme", status: "pending" })
        const [first, second] = yield* Effect.forEach([1, 2], () =>
          Effect.forkChild(t.watches.wait("acme", "d1", forever, Effect.never))
        )
        yield* t.holding("acme", "d1", 2)
        yield* Fiber.interrupt(first!)
        assert.strictEqual(t.watches.waiting("acme", "d1"), 1)
        assert.strictEqual(t.counts.subscriptions, 1)
        yield* Fiber.interrupt(second!)
        while (t.counts.subscriptions > 0) yield* Effect.yieldNow
        assert.strictEqual(t.watches.waiting("acme", "d1"), 0)

        const again = yield* Effect.forkChild(t.watches.wait("acme", "d1", forever, Effect.never))
        yield* t.holding("acme", "d1", 1)
        yield* t.change("d1", "cancelled")
        assert.strictEqual((yield* Fiber.join(again)).status, "cancelled")
      })
    )
  )
})
