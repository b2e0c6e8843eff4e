import { Context, Schema, type Effect } from "effect"

/** One email: a plain-text part and an HTML part, to one address. */
export interface MailMessage {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html: string
}

/**
 * The mail server refused or could not be reached. `permanent` when retrying cannot help (the server
 * refused the recipient or the message); the cause is kept for logs and never shown.
 */
export class MailerError extends Schema.TaggedError<MailerError>()("MailerError", {
  permanent: Schema.Boolean,
  cause: Schema.optionalKey(Schema.Defect())
}) {}

/**
 * Sends email. The port is the last step of delivery: callers put a message in an outbox inside their unit
 * of work and a worker hands it here, retrying a transient failure (see docs/sign-in.md).
 */
export class Mailer extends Context.Service<
  Mailer,
  { readonly send: (message: MailMessage) => Effect.Effect<void, MailerError> }
>()("core/kernel/Mailer") {}
