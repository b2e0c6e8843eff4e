import { assert, describe, it } from "@effect/vitest"
import { Effect, type Layer, Redacted } from "effect"
import { generateKeyPairSync } from "node:crypto"
import { importJWK, jwtVerify } from "jose"
import { ChatChannelHttp } from "../../adapters/http/hub/ChatChannelHttp.ts"
import { PushChannelWebPush } from "../../adapters/http/hub/PushChannelWebPush.ts"
import { vapidPublicKeyOf } from "../../apps/server/hub/HubChannels.ts"
import { ChatChannel, PushChannel } from "../../core/hub/Channels.ts"
import { PersonNotifications } from "../../core/hub/PersonNotifications.ts"
import { PushSubscriptionStore } from "../../core/hub/PushSubscriptions.ts"
import { hubEventsStack, testSecretsKey } from "../support/HubEvents.ts"
import { newPushKeys, startPeer } from "../support/NotificationPeers.ts"

const vapidPrivateKey = generateKeyPairSync("ec", { namedCurve: "prime256v1" }).privateKey.export({ format: "jwk" }).d!
const vapid = {
  publicKey: vapidPublicKeyOf(vapidPrivateKey)!,
  privateKey: Redacted.make(vapidPrivateKey),
  subject: "mailto:ops@example.test"
}

/** The hub's person-facing notifications on memory stores (development settings; a test overrides them). */
const personStack: Layer.Layer<any, unknown> = hubEventsStack()

const peer = (status = 201) =>
  Effect.acquireRelease(
    Effect.promise(() => startPeer(status)),
    (p) => Effect.promise(p.close)
  )

describe("the hub's chat and push adapters against local peers", () => {
  it.live(
    "a push is encrypted for the subscription (the browser's keys decrypt it) and VAPID-signed for its origin",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const service = yield* peer(201)
          const keys = newPushKeys()
          const push = yield* Effect.provide(
            PushChannel.use(Effect.succeed),
            PushChannelWebPush({ allowLoopback: true, vapid })
          )
          assert.strictEqual(push.publicKey, vapid.publicKey)
          const endpoint = service.url("/push/abc")
          yield* push.send({ endpoint, keys: keys.json }, JSON.stringify({ title: "Héllo" }))
          const [received] = service.received
          assert.strictEqual(received?.headers["content-encoding"], "aes128gcm")
          assert.deepStrictEqual(JSON.parse(keys.decrypt(received!.body)), { title: "Héllo" })
          // Another browser's keys cannot read it.
          assert.throws(() => newPushKeys().decrypt(received!.body))
          const authorization = String(received?.headers["authorization"])
          const [, token, key] = /^vapid t=([^,]+), k=(.+)$/.exec(authorization) ?? []
          assert.strictEqual(key, vapid.publicKey)
          const point = Buffer.from(vapid.publicKey, "base64url")
          const jwk = {
            kty: "EC",
            crv: "P-256",
            x: point.subarray(1, 33).toString("base64url"),
            y: point.subarray(33).toString("base64url")
          }
          const verified = yield* Effect.promise(async () => jwtVerify(token!, await importJWK(jwk, "ES256")))
          assert.strictEqual(verified.payload.aud, new URL(endpoint).origin)
          assert.strictEqual(verified.payload.sub, "mailto:ops@example.test")
        })
      )
  )

  it.live("404 and 410 from the push service mean gone; 408, 429 and 5xx are transient; other 4xx permanent", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const service = yield* peer(201)
        const push = yield* Effect.provide(
          PushChannel.use(Effect.succeed),
          PushChannelWebPush({ allowLoopback: true, vapid })
        )
        const keys = newPushKeys().json
        const outcomes: Array<string> = []
        for (const [path, status] of [
          ["/a", 410],
          ["/b", 404],
          ["/c", 503],
          ["/d", 429],
          ["/f", 408],
          ["/e", 403]
        ] as const) {
          service.answer(path, status)
          const failure = yield* Effect.flip(push.send({ endpoint: service.url(path), keys }, "{}"))
          outcomes.push(`${status}:${failure.kind}`)
        }
        assert.deepStrictEqual(outcomes, [
          "410:gone",
          "404:gone",
          "503:transient",
          "429:transient",
          "408:transient",
          "403:permanent"
        ])
        const off = yield* Effect.provide(
          PushChannel.use(Effect.succeed),
          PushChannelWebPush({ allowLoopback: true, vapid: undefined })
        )
        assert.isUndefined(off.publicKey)
      })
    )
  )

  it.live("chat posts {text} as JSON; private addresses are refused for good outside loopback development", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const receiver = yield* peer(200)
        const chat = yield* Effect.provide(ChatChannel.use(Effect.succeed), ChatChannelHttp({ allowLoopback: true }))
        yield* chat.post(receiver.url("/hook"), "*Hi* <https://hub.example/|Open>")
        assert.deepStrictEqual(JSON.parse(receiver.received[0]!.body.toString("utf8")), {
          text: "*Hi* <https://hub.example/|Open>"
        })
        assert.strictEqual(receiver.received[0]!.headers["content-type"], "application/json")
        receiver.answer("/gone", 404)
        assert.strictEqual((yield* Effect.flip(chat.post(receiver.url("/gone"), "x"))).kind, "permanent")
        const strict = yield* Effect.provide(ChatChannel.use(Effect.succeed), ChatChannelHttp({ allowLoopback: false }))
        const refused = yield* Effect.flip(strict.post(receiver.url("/hook"), "x"))
        assert.deepStrictEqual([refused.kind, refused.reason], ["permanent", "the address is not allowed"])
        const byName = yield* Effect.flip(strict.post(receiver.url("/hook").replace("127.0.0.1", "localhost"), "x"))
        assert.strictEqual(byName.kind, "permanent")
        assert.strictEqual(receiver.received.length, 2)
      })
    )
  )

  it.live("a push endpoint on a private network is refused at registration in production", () =>
    Effect.gen(function* () {
      // The person's side as production runs it: no loopback allowance.
      const mine = yield* Effect.provide(
        PersonNotifications.use(Effect.succeed),
        PersonNotifications.layer({ secretsKey: testSecretsKey, allowLoopbackHttp: false })
      )
      const keys = newPushKeys().json
      for (const endpoint of [
        "https://localhost/push/1",
        "https://localhost./push/1",
        "https://127.0.0.1/push/1",
        "https://[::1]/push/1",
        "https://10.0.0.8/push/1",
        "https://169.254.169.254/push/1",
        "https://push.internal/push/1",
        "http://push.example/push/1"
      ]) {
        const refused = yield* Effect.flip(mine.subscribe("usr_ada", { endpoint, keys }))
        assert.strictEqual(refused._tag, "ValidationError", endpoint)
      }
      assert.deepStrictEqual(yield* PushSubscriptionStore.use((s) => s.forUser("usr_ada")), [])
      yield* mine.subscribe("usr_ada", { endpoint: "https://push.example/push/1", keys })
      assert.strictEqual((yield* PushSubscriptionStore.use((s) => s.forUser("usr_ada"))).length, 1)
    }).pipe(Effect.provide(personStack))
  )

  it.live(
    "outside loopback development a push endpoint whose name resolves to a private address is not contacted",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const service = yield* peer(201)
          const keys = newPushKeys().json
          const strict = yield* Effect.provide(
            PushChannel.use(Effect.succeed),
            PushChannelWebPush({ allowLoopback: false, vapid })
          )
          // Names are resolved at delivery; every address they resolve to is checked, then the one checked is used.
          for (const endpoint of [
            service.url("/push/by-address"),
            service.url("/push/by-name").replace("127.0.0.1", "localhost")
          ]) {
            const refused = yield* Effect.flip(strict.send({ endpoint, keys }, "{}"))
            assert.deepStrictEqual(
              [refused.kind, refused.reason],
              ["permanent", "the address is not allowed"],
              endpoint
            )
          }
          assert.strictEqual(service.received.length, 0)
          // The same push service is reached where loopback is allowed (development and tests).
          const local = yield* Effect.provide(
            PushChannel.use(Effect.succeed),
            PushChannelWebPush({ allowLoopback: true, vapid })
          )
          yield* local.send({ endpoint: service.url("/push/by-name").replace("127.0.0.1", "localhost"), keys }, "{}")
          assert.deepStrictEqual(
            service.received.map((r) => r.path),
            ["/push/by-name"]
          )
        })
      )
  )
})
