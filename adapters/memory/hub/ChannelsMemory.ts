import { Context, Effect, Layer } from "effect"
import { ChannelFailure, ChatChannel, PushChannel, type PushTarget } from "../../../core/hub/Channels.ts"

/** One message a memory channel took. */
export interface ChannelMessage {
  readonly channel: "chat" | "push"
  /** The chat webhook's URL or the push endpoint. */
  readonly to: string
  readonly text: string
  /** A chat message's Slack-compatible blocks, when it has any. */
  readonly blocks?: ReadonlyArray<unknown> | undefined
}

/** What the memory channels hold, and a switch to make the next sends fail. */
export class ChannelMessages extends Context.Service<
  ChannelMessages,
  {
    readonly sent: () => Effect.Effect<ReadonlyArray<ChannelMessage>>
    /** Every send asked of the channels, delivered or failed: each one a request a real channel would make. */
    readonly tried: () => Effect.Effect<ReadonlyArray<ChannelMessage>>
    /** While set, every send fails with this kind and records nothing. */
    readonly failWith: (kind: ChannelFailure["kind"] | undefined) => Effect.Effect<void>
  }
>()("adapters/memory/hub/ChannelMessages") {}

/**
 * The chat and push channels in memory: they record what they would send (tests, embedding, demos). Push
 * is configured with a placeholder key, so subscriptions are accepted.
 */
export const ChannelsMemory = Layer.effectContext(
  Effect.sync(() => {
    const sent: Array<ChannelMessage> = []
    const tried: Array<ChannelMessage> = []
    let failure: ChannelFailure["kind"] | undefined
    const record = (message: ChannelMessage) =>
      Effect.suspend(() => {
        tried.push(message)
        if (failure !== undefined) {
          return Effect.fail(new ChannelFailure({ kind: failure, reason: `the ${message.channel} peer failed` }))
        }
        sent.push(message)
        return Effect.void
      })
    return Context.mergeAll(
      ChatChannel.context({
        post: (url, text, blocks) =>
          record({ channel: "chat", to: url, text, ...(blocks === undefined ? {} : { blocks }) })
      }),
      PushChannel.context({
        publicKey: "memory-push-key",
        send: (target: PushTarget, payload) => record({ channel: "push", to: target.endpoint, text: payload })
      }),
      ChannelMessages.context({
        sent: () => Effect.sync(() => [...sent]),
        tried: () => Effect.sync(() => [...tried]),
        failWith: (kind) =>
          Effect.sync(() => {
            failure = kind
          })
      })
    )
  })
)
