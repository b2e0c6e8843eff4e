import { Effect, Layer, Redacted } from "effect"
import nodemailer from "nodemailer"
import { Mailer, MailerError, type MailMessage } from "../../core/kernel/Mailer.ts"

export interface MailerSmtpConfig {
  /** `smtp://user:pass@host:port` or `smtps://...` (`SMTP_URL`); it may hold a password, so it stays redacted. */
  readonly url: Redacted.Redacted<string>
  /** The sender, `Name <address>` or a bare address (`SMTP_FROM`). */
  readonly from: string
  /** How long one connection attempt and one command may take. */
  readonly timeoutMs?: number | undefined
}

/** An SMTP reply code of 5xx is a permanent refusal (RFC 5321, 4.2.1); anything else may pass on a retry. */
const isPermanent = (cause: unknown) => {
  const code = (cause as { responseCode?: unknown } | null)?.responseCode
  return typeof code === "number" && code >= 500 && code < 600
}

/**
 * The Mailer port over SMTP with nodemailer: one pooled transport per layer, closed with it. Every failure is
 * one `MailerError` with the cause kept (for the log) and never shown.
 */
export const MailerSmtp = (config: MailerSmtpConfig) =>
  Layer.effect(
    Mailer,
    Effect.gen(function* () {
      const timeout = config.timeoutMs ?? 30_000
      const transport = yield* Effect.acquireRelease(
        Effect.sync(() =>
          nodemailer.createTransport({
            url: Redacted.value(config.url),
            pool: true,
            connectionTimeout: timeout,
            greetingTimeout: timeout,
            socketTimeout: timeout
          })
        ),
        (transport) => Effect.sync(() => transport.close())
      )
      const use = (message: MailMessage) =>
        Effect.tryPromise({
          try: () =>
            transport.sendMail({
              from: config.from,
              to: message.to,
              subject: message.subject,
              text: message.text,
              html: message.html
            }),
          catch: (cause) => new MailerError({ permanent: isPermanent(cause), cause })
        })
      return Mailer.of({
        send: Effect.fn("MailerSmtp.send")(function* (message: MailMessage) {
          yield* use(message)
        })
      })
    })
  )
