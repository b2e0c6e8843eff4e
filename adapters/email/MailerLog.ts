import { Effect, Layer } from "effect"
import { Mailer, type MailMessage } from "../../core/kernel/Mailer.ts"

/**
 * Development without a mail server (`SMTP_URL` unset): every message, sign-in links included, is written
 * to the log instead of sent, so a person running the server locally can still sign in. Never in
 * production: there a missing mail server is a configuration error, not a reason to log links.
 */
export const MailerLog = Layer.succeed(Mailer)(
  Mailer.of({
    send: (message: MailMessage) =>
      Effect.logInfo("email not sent (no mail server configured); its text follows").pipe(
        Effect.annotateLogs({ to: message.to, subject: message.subject, text: message.text })
      )
  })
)

/**
 * As `MailerLog`, but the message is printed as plain text by `print` (the server's console, among its log
 * lines) rather than inside a log line, where its links would be escaped: a person copies a sign-in link
 * from it as it is. The log line that says so names the recipient and the subject only.
 */
export const MailerPrinted = (print: (text: string) => void) =>
  Layer.succeed(Mailer)(
    Mailer.of({
      send: (message: MailMessage) =>
        Effect.andThen(
          Effect.logInfo("email not sent (no mail server configured); printed below").pipe(
            Effect.annotateLogs({ to: message.to, subject: message.subject })
          ),
          Effect.sync(() =>
            print(
              [
                `---- email to ${message.to}: ${message.subject}`,
                ...message.text.replace(/\s+$/, "").split("\n"),
                "----"
              ].join("\n")
            )
          )
        )
    })
  )
