import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Redacted } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { HubEventPublisherHttp, hubCatalogLists } from "../../adapters/http/HubEventPublisherHttp.ts"
import { HubEventPublisher, HubPublishFailed } from "../../core/events/HubEventPublisher.ts"
import type { ProducerEvent } from "../../core/events/ProducerOutbox.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"

/**
 * A hub whose port takes connections but never answers (a server between its listen and its routes, or a
 * stuck one): the relay's readiness check and its sends give up after their timeouts, however often the
 * runtime collects garbage meanwhile. Timeouts kept alive only by a composite abort signal were once
 * collected unfired, and a relay waited for ever.
 */

setFlagsFromString("--expose-gc")
const collectGarbage = runInNewContext("gc") as () => void

const silentHub = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<Server>((resolve) => {
        // No request listener: every request is read and left unanswered.
        const server = createServer()
        server.listen(0, "127.0.0.1", () => resolve(server))
      })
  ),
  (server) => Effect.sync(() => server.close()).pipe(Effect.andThen(Effect.sync(() => server.closeAllConnections())))
).pipe(Effect.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`))

/** Collects garbage every 20 ms while `effect` runs. */
const underCollection = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => setInterval(collectGarbage, 20)),
    () => effect,
    (timer) => Effect.sync(() => clearInterval(timer))
  )

describe("the hub publisher against a hub that never answers", () => {
  it.live("the catalog check answers not yet once its timeout has passed", () =>
    Effect.gen(function* () {
      const hubUrl = yield* silentHub
      const started = Date.now()
      const ready = yield* underCollection(
        hubCatalogLists({ hubUrl, service: "decisions", type: "decisions.notification.created", timeoutMs: 300 })
      )
      assert.isFalse(ready)
      assert.isAtLeast(Date.now() - started, 250)
    }).pipe(Effect.scoped)
  )

  it.live("a send fails as a timeout, to be retried", () =>
    Effect.gen(function* () {
      const hubUrl = yield* silentHub
      const publisher = yield* Effect.provide(
        Effect.service(HubEventPublisher),
        HubEventPublisherHttp({ hubUrl, signingKey: Redacted.make("key"), timeoutMs: 300 }).pipe(
          Layer.provide(IdGeneratorUlid)
        )
      )
      const event: ProducerEvent = {
        id: "01J0000000000000000000000A",
        type: "decisions.notification.created",
        service: "decisions",
        occurredAt: "2026-11-28T12:00:00.000Z",
        subject: { email: "ada@acme.test" },
        data: { title: "Hello" },
        contractVersion: "v1"
      }
      const exit = yield* underCollection(Effect.exit(publisher.publish(event)))
      assert.isTrue(Exit.isFailure(exit))
      const failure = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
      assert.instanceOf(failure, HubPublishFailed)
      assert.strictEqual((failure as HubPublishFailed).reason, "timeout")
    }).pipe(Effect.scoped)
  )
})
