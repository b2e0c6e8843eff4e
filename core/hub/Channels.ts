import { Context, Schema, type Effect } from "effect"

/**
 * A channel's peer did not take the message. `transient`: worth another attempt later (no answer, 429, 5xx,
 * a mail server's 4xx). `permanent`: retrying cannot help (a 4xx, a refused recipient, a blocked address).
 * `gone`: the push service says the subscription no longer exists (404, 410). `reason` is user-safe: it is
 * what the delivery log shows, never a vendor's text or an address.
 */
export class ChannelFailure extends Schema.TaggedError<ChannelFailure>()("ChannelFailure", {
  kind: Schema.Literals(["transient", "permanent", "gone"]),
  reason: Schema.String
}) {}

/**
 * Posts a Slack-compatible incoming-webhook message, `{text}`, to the webhook's URL; with `blocks`,
 * `{text, blocks}` (the text is then what receivers without blocks show).
 */
export class ChatChannel extends Context.Service<
  ChatChannel,
  {
    readonly post: (
      url: string,
      text: string,
      blocks?: ReadonlyArray<unknown> | undefined
    ) => Effect.Effect<void, ChannelFailure>
  }
>()("core/hub/ChatChannel") {}

/** A browser's push subscription, as its Push API hands it over. */
export interface PushTarget {
  readonly endpoint: string
  readonly keys: { readonly p256dh: string; readonly auth: string }
}

/**
 * Web push (the Web Push protocol, payload encrypted for the subscription, VAPID-signed). `publicKey` is
 * the application server key browsers subscribe with; undefined when push is not configured.
 */
export class PushChannel extends Context.Service<
  PushChannel,
  {
    readonly publicKey: string | undefined
    readonly send: (target: PushTarget, payload: string) => Effect.Effect<void, ChannelFailure>
  }
>()("core/hub/PushChannel") {}
