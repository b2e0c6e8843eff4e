import { Effect, Layer, Option, Redacted } from "effect"
import { createECDH } from "node:crypto"
import { ChatChannelHttp } from "../../../adapters/http/hub/ChatChannelHttp.ts"
import { PushChannelWebPush, type VapidKeys } from "../../../adapters/http/hub/PushChannelWebPush.ts"
import type { Secrets, ServerConfig } from "../Config.ts"

/** The public key of a VAPID private key (base64url, 32 bytes): the uncompressed P-256 point, base64url. */
export const vapidPublicKeyOf = (privateKey: string): string | undefined => {
  try {
    const ecdh = createECDH("prime256v1")
    ecdh.setPrivateKey(Buffer.from(privateKey, "base64url"))
    return ecdh.getPublicKey().toString("base64url")
  } catch {
    return undefined
  }
}

/**
 * The VAPID keys from HUB_VAPID_PRIVATE_KEY (and HUB_VAPID_PUBLIC_KEY, which must be its public half when
 * set). Without a usable pair web push is off: no key is offered to browsers and nothing is pushed.
 */
export const vapidKeysFromConfig = (
  config: Pick<ServerConfig, "hubVapidPublicKey" | "hubVapidSubject">,
  secrets: Pick<Secrets, "HUB_VAPID_PRIVATE_KEY">
): { readonly keys: VapidKeys | undefined; readonly problem: string | undefined } => {
  const privateKey = secrets.HUB_VAPID_PRIVATE_KEY
  if (privateKey === undefined) return { keys: undefined, problem: undefined }
  const derived = vapidPublicKeyOf(Redacted.value(privateKey))
  if (derived === undefined) return { keys: undefined, problem: "HUB_VAPID_PRIVATE_KEY is not a P-256 private key" }
  const configured = Option.getOrUndefined(config.hubVapidPublicKey)
  if (configured !== undefined && configured !== derived) {
    return { keys: undefined, problem: "HUB_VAPID_PUBLIC_KEY is not the public half of HUB_VAPID_PRIVATE_KEY" }
  }
  return { keys: { publicKey: derived, privateKey, subject: config.hubVapidSubject }, problem: undefined }
}

/** The hub's notification channels beside email (the Mailer, shared with sign-in): chat over webhooks, web push. */
export const HubChannelsFromConfig = (config: ServerConfig, secrets: Secrets) => {
  const production = config.environment === "production"
  const vapid = vapidKeysFromConfig(config, secrets)
  const warn =
    vapid.problem === undefined
      ? Layer.empty
      : Layer.effectDiscard(Effect.logWarning(`web push is off: ${vapid.problem}`))
  return Layer.mergeAll(
    ChatChannelHttp({ allowLoopback: !production }),
    PushChannelWebPush({ allowLoopback: !production, vapid: vapid.keys }),
    warn
  )
}
