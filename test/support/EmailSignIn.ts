import { assert } from "vitest"
import type { ReceivedMail, SmtpTestServer } from "./SmtpServer.ts"

/** The sign-in link in the text of an email the hub sent, if it holds one. */
export const signInLinkIn = (text: string) =>
  /https?:\/\/\S+\/auth\/email\/callback\?token=[A-Za-z0-9_%-]+/.exec(text)?.[0]

/** An email that carries a sign-in link (as opposed to a notification). */
export const isSignInMail = (mail: ReceivedMail) => mail.text.includes("/auth/email/callback")

/**
 * Signs `email` in at the hub listening at `hubUrl` by the link emailed to them: asks for a link, waits for the
 * email at `smtp`, checks the link names the hub's `publicUrl`, and opens it on `hubUrl` as the browser that
 * asked for it (the public address may be one the test cannot reach). Answers the value of their `hub_session`
 * cookie.
 */
export const signInByEmailedLink = async (options: {
  readonly hubUrl: string
  readonly smtp: SmtpTestServer
  readonly email: string
  readonly publicUrl?: string | undefined
  readonly waitMillis?: number | undefined
}): Promise<string> => {
  const { hubUrl, smtp, email } = options
  const before = smtp.to(email).length
  const asked = await fetch(`${hubUrl}/auth/email`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email })
  })
  assert.strictEqual(asked.status, 202)
  // The link opens at once in the browser that asked for it: the one holding this cookie.
  const nonce = /hub_sign_in=([^;]+)/.exec(asked.headers.get("set-cookie") ?? "")?.[1]
  assert.isDefined(nonce)
  const mail = (await smtp.waitFor(email, before + 1, options.waitMillis ?? 60_000))[before]!
  const link = signInLinkIn(mail.text)
  assert.isDefined(link, mail.text)
  assert.isTrue(link!.startsWith(`${options.publicUrl ?? hubUrl}/auth/email/callback?`), link)
  const { pathname, search } = new URL(link!)
  const landed = await fetch(`${hubUrl}${pathname}${search}`, {
    redirect: "manual",
    headers: { cookie: `hub_sign_in=${nonce}` }
  })
  assert.strictEqual(landed.status, 303)
  const session = /hub_session=([^;]+)/.exec(landed.headers.get("set-cookie") ?? "")?.[1]
  assert.isDefined(session)
  return session!
}
