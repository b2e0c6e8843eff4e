import { Effect, Layer } from "effect"
import { ChatChannel } from "../../../core/hub/Channels.ts"
import { failureOfStatus, postGuarded, type ChannelHttpConfig } from "./ChannelHttp.ts"

/** The chat channel over a Slack-compatible incoming webhook: `POST {text}` (or `{text, blocks}`) as JSON. */
export const ChatChannelHttp = (config: ChannelHttpConfig) =>
  Layer.succeed(ChatChannel)(
    ChatChannel.of({
      post: (url, text, blocks) =>
        postGuarded(config, {
          url,
          headers: { "content-type": "application/json" },
          body: new TextEncoder().encode(JSON.stringify(blocks === undefined ? { text } : { text, blocks }))
        }).pipe(
          Effect.flatMap((status) => {
            const failure = failureOfStatus(status, "the chat webhook")
            return failure === undefined ? Effect.void : Effect.fail(failure)
          })
        )
    })
  )
