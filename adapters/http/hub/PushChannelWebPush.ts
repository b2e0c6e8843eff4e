import { Effect, Layer, Redacted } from "effect"
import webPush from "web-push"
import { ChannelFailure, PushChannel } from "../../../core/hub/Channels.ts"
import { failureOfStatus, postGuarded, type ChannelHttpConfig } from "./ChannelHttp.ts"

export interface VapidKeys {
  /** The application server key browsers subscribe with (`HUB_VAPID_PUBLIC_KEY`), base64url. */
  readonly publicKey: string
  readonly privateKey: Redacted.Redacted<string>
  /** Who runs this server, for push services to reach: `mailto:` or an https URL (`HUB_VAPID_SUBJECT`). */
  readonly subject: string
}

/** How long a push service keeps a message for a browser that is offline: one day. */
const timeToLiveSeconds = 24 * 60 * 60

/**
 * Web push with the `web-push` library: it encrypts the payload for the subscription (aes128gcm) and signs
 * the VAPID header; the request goes out through the hub's guarded POST (the endpoint's addresses are
 * checked as a chat webhook's are). 404 and 410 mean the subscription is gone.
 */
export const PushChannelWebPush = (config: ChannelHttpConfig & { readonly vapid: VapidKeys | undefined }) =>
  Layer.succeed(PushChannel)(
    PushChannel.of({
      publicKey: config.vapid?.publicKey,
      send: (target, payload) =>
        Effect.gen(function* () {
          const vapid = config.vapid
          if (vapid === undefined) {
            return yield* new ChannelFailure({ kind: "permanent", reason: "web push is not configured" })
          }
          const details = yield* Effect.try({
            try: () =>
              webPush.generateRequestDetails({ endpoint: target.endpoint, keys: { ...target.keys } }, payload, {
                TTL: timeToLiveSeconds,
                contentEncoding: "aes128gcm",
                vapidDetails: {
                  subject: vapid.subject,
                  publicKey: vapid.publicKey,
                  privateKey: Redacted.value(vapid.privateKey)
                }
              }),
            catch: () => new ChannelFailure({ kind: "permanent", reason: "the subscription's keys are not usable" })
          })
          const headers = Object.fromEntries(
            Object.entries(details.headers).map(([name, value]) => [name.toLowerCase(), String(value)])
          )
          const status = yield* postGuarded(config, {
            url: details.endpoint,
            headers,
            body: details.body ?? new Uint8Array()
          })
          if (status === 404 || status === 410) {
            return yield* new ChannelFailure({ kind: "gone", reason: `the push service answered ${status}` })
          }
          const failure = failureOfStatus(status, "the push service")
          if (failure !== undefined) return yield* failure
        })
    })
  )
