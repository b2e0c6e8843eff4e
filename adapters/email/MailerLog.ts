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
