import { Context, Effect, Layer } from "effect"
import { Mailer, MailerError, type MailMessage } from "../../core/kernel/Mailer.ts"

/** What the recording mailer holds: every message sent, oldest first, and a switch to make sending fail. */
export class MailerRecordings extends Context.Service<
  MailerRecordings,
  {
    readonly sent: () => Effect.Effect<ReadonlyArray<MailMessage>>
    /** While set, `send` fails with this (`transient` or `permanent`) and records nothing. */
    readonly failWith: (failure: "transient" | "permanent" | undefined) => Effect.Effect<void>
  }
>()("adapters/memory/MailerRecordings") {}

/** The Mailer port in memory: it records messages instead of sending them (tests, embedding, demos). */
export const MailerMemory = Layer.effectContext(
  Effect.sync(() => {
    const sent: Array<MailMessage> = []
    let failure: "transient" | "permanent" | undefined
    return Context.mergeAll(
      Mailer.context({
        send: (message) =>
          Effect.suspend(() => {
            if (failure !== undefined) return Effect.fail(new MailerError({ permanent: failure === "permanent" }))
            sent.push({ ...message })
            return Effect.void
          })
      }),
      MailerRecordings.context({
        sent: () => Effect.sync(() => [...sent]),
        failWith: (next) =>
          Effect.sync(() => {
            failure = next
          })
      })
    )
  })
)
