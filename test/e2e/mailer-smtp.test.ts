import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { MailerSmtp } from "../../adapters/email/MailerSmtp.ts"
import { MailerMemory, MailerRecordings } from "../../adapters/memory/MailerMemory.ts"
import { Mailer } from "../../core/kernel/Mailer.ts"
import { startSmtpServer } from "../support/SmtpServer.ts"

const message = {
  to: "Ada@Example.com",
  subject: "Sign in to the workspace — one link",
  text: "Open this link to sign in: https://hub.example/auth/email/callback?token=abc_123-xyz\n\nÜbung macht den Meister.",
  html: '<p>Open <a href="https://hub.example/auth/email/callback?token=abc_123-xyz">this link</a> to sign in.</p>'
}

const withSmtp = <A, E>(use: (smtp: Awaited<ReturnType<typeof startSmtpServer>>) => Effect.Effect<A, E, Mailer>) =>
  Effect.acquireRelease(
    Effect.promise(() => startSmtpServer()),
    (smtp) => Effect.promise(() => smtp.close())
  ).pipe(
    Effect.flatMap((smtp) =>
      use(smtp).pipe(
        Effect.provide(
          MailerSmtp({ url: Redacted.make(smtp.url), from: "Platform <hub@example.com>", timeoutMs: 5_000 })
        )
      )
    )
  )

describe("MailerSmtp over a real SMTP server", () => {
  it.live("delivers the text and HTML parts, the subject and the sender", () =>
    Effect.scoped(
      withSmtp((smtp) =>
        Effect.gen(function* () {
          yield* (yield* Mailer).send(message)
          const [mail] = smtp.to("ada@example.com")
          assert.isDefined(mail)
          assert.strictEqual(mail!.subject, message.subject)
          assert.strictEqual(mail!.from, "hub@example.com")
          assert.include(mail!.headers.get("from") ?? "", "Platform")
          assert.strictEqual(mail!.text.trim(), message.text)
          assert.strictEqual(mail!.html.trim(), message.html)
        })
      )
    )
  )

  it.live("a 5xx refusal is a permanent MailerError, a 4xx a transient one", () =>
    Effect.scoped(
      withSmtp((smtp) =>
        Effect.gen(function* () {
          const mailer = yield* Mailer
          smtp.behave({ refuse: 550 })
          const permanent = yield* Effect.flip(mailer.send(message))
          assert.strictEqual(permanent._tag, "MailerError")
          assert.isTrue(permanent.permanent)
          smtp.behave({ refuse: 451 })
          const transient = yield* Effect.flip(mailer.send(message))
          assert.isFalse(transient.permanent)
          smtp.behave("accept")
          yield* mailer.send(message)
          assert.strictEqual(smtp.received.length, 1)
        })
      )
    )
  )

  it.live("an unreachable server is a transient MailerError", () =>
    Effect.gen(function* () {
      const smtp = yield* Effect.promise(() => startSmtpServer())
      yield* Effect.promise(() => smtp.close())
      const failure = yield* Effect.flip(
        Effect.flatMap(Mailer, (mailer) => mailer.send(message)).pipe(
          Effect.provide(MailerSmtp({ url: Redacted.make(smtp.url), from: "hub@example.com", timeoutMs: 2_000 }))
        )
      )
      assert.isFalse(failure.permanent)
    })
  )
})

describe("MailerMemory", () => {
  it.effect("records what it sends, and fails while told to", () =>
    Effect.gen(function* () {
      const mailer = yield* Mailer
      const recordings = yield* MailerRecordings
      yield* mailer.send(message)
      yield* recordings.failWith("transient")
      const failure = yield* Effect.flip(mailer.send(message))
      assert.isFalse(failure.permanent)
      yield* recordings.failWith(undefined)
      assert.deepStrictEqual(yield* recordings.sent(), [message])
    }).pipe(Effect.provide(MailerMemory))
  )
})
