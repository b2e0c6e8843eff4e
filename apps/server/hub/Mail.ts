import { Effect, Layer, Option } from "effect"
import { MailerLog, MailerPrinted } from "../../../adapters/email/MailerLog.ts"
import { MailerSmtp } from "../../../adapters/email/MailerSmtp.ts"
import { Mailer, MailerError } from "../../../core/kernel/Mailer.ts"
import type { ServerConfig } from "../Config.ts"

/** Production without `SMTP_URL`: nothing can be sent, and links are never logged instead (fails closed). */
const MailerUnconfigured = Layer.succeed(Mailer)(
  Mailer.of({
    send: () =>
      Effect.logWarning("email not sent: no mail server is configured").pipe(
        Effect.andThen(Effect.fail(new MailerError({ permanent: true })))
      )
  })
)

/**
 * The server's Mailer: SMTP when `SMTP_URL` is set; else, outside production, the console (printed plainly by
 * `print` when given, else in a log line); in production nothing.
 */
export const MailerFromConfig = (
  config: Pick<ServerConfig, "smtpUrl" | "smtpFrom" | "environment">,
  print?: ((text: string) => void) | undefined
) =>
  Option.match(config.smtpUrl, {
    onSome: (url) => MailerSmtp({ url, from: config.smtpFrom }),
    onNone: () =>
      config.environment === "production" ? MailerUnconfigured : print === undefined ? MailerLog : MailerPrinted(print)
  })
