import { Clock, Context, Effect, Layer, Schema } from "effect"
import { hashSecret, issueSecret, secretHasPrefix } from "../auth/IssuedSecret.ts"
import { normalizeEmail } from "../kernel/Email.ts"
import { NotConfigured } from "../kernel/Errors.ts"
import type { MailMessage } from "../kernel/Mailer.ts"
import { isRootRelativePath } from "../kernel/RootRelativePath.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { Transactions } from "../kernel/Transactions.ts"
import { Directory } from "./Directory.ts"
import { MailDeliveries } from "./MailDeliveries.ts"
import { Sessions, type StartedSession } from "./Sessions.ts"
import { SignInTokenStore, type SignInPurpose } from "./SignInTokenStore.ts"

/** The longest an emailed sign-in link may live. */
export const maxEmailLinkMillis = 15 * 60_000

export interface SignInLinksConfig {
  /** Where people's browsers reach the hub (no trailing slash): links are `<it>/auth/email/callback?token=…`. */
  readonly publicUrl: string
  /** How long an emailed link works; at most 15 minutes. */
  readonly emailLinkMillis?: number | undefined
}

/** A link that is unknown, mistyped, expired or already used: one answer for all, so none is told apart. */
export class InvalidSignInLink extends Schema.TaggedError<InvalidSignInLink>()("InvalidSignInLink", {}) {}

export interface SignedIn {
  readonly session: StartedSession
  readonly userId: string
  /** Where the link lands (a root-relative path of the hub), or null for the caller's choice. */
  readonly next: string | null
}

/** Link secrets are `sl_` then 256 random bits; anything else is refused before any lookup. */
const tokenPrefix = "sl_"

export const callbackPath = "/auth/email/callback"

/** A new link secret: the plaintext goes into the link only; its hash is what the store keeps. */
export const newLinkToken = () => issueSecret(tokenPrefix)

export const linkUrl = (publicUrl: string, token: string) =>
  `${publicUrl}${callbackPath}?token=${encodeURIComponent(token)}`

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

/** The sign-in email: a plain-text part and an HTML part carrying the same link. */
export const signInEmail = (to: string, url: string, minutes: number): MailMessage => ({
  to,
  subject: "Your sign-in link",
  text:
    `Open this link to sign in:\n\n${url}\n\n` +
    `It works once, within ${minutes} minutes. If you did not ask to sign in, ignore this email.\n`,
  html:
    `<p>Open this link to sign in:</p>\n<p><a href="${escapeHtml(url)}">Sign in</a></p>\n` +
    `<p>It works once, within ${minutes} minutes. If you did not ask to sign in, ignore this email.</p>\n`
})

/**
 * Sign-in by link. `requestEmailLink` answers the same for every well-formed address: only a directory user
 * gets an email (its link's hash stored and the email queued in one unit of work), and an unknown address
 * does the same preparation without writing, so neither the answer nor its work tells the two apart.
 * `redeem` turns a link into a new session once: the link is spent and the session made in one unit.
 */
export class SignInLinks extends Context.Service<
  SignInLinks,
  {
    readonly requestEmailLink: (email: string, next: string | undefined) => Effect.Effect<void, NotConfigured>
    readonly redeem: (token: string) => Effect.Effect<SignedIn, InvalidSignInLink>
  }
>()("core/hub/SignInLinks") {
  static readonly layer = (
    config: SignInLinksConfig
  ): Layer.Layer<SignInLinks, never, Directory | SignInTokenStore | Sessions | MailDeliveries | Transactions> =>
    Layer.effect(
      SignInLinks,
      Effect.gen(function* () {
        const directory = yield* Directory
        const tokens = yield* SignInTokenStore
        const sessions = yield* Sessions
        const mail = yield* MailDeliveries
        const transactions = yield* Transactions
        const lifetime = Math.min(config.emailLinkMillis ?? maxEmailLinkMillis, maxEmailLinkMillis)
        const minutes = Math.max(1, Math.floor(lifetime / 60_000))

        return SignInLinks.of({
          requestEmailLink: Effect.fn("SignInLinks.requestEmailLink")(function* (
            address: string,
            next: string | undefined
          ) {
            // Checked first, so a server that cannot send answers every address the same.
            if (!mail.configured) return yield* new NotConfigured({ message: "Sign-in by email is not configured." })
            const email = normalizeEmail(address)
            const landing = next !== undefined && isRootRelativePath(next) ? next : null
            const token = newLinkToken()
            const message = signInEmail(email, linkUrl(config.publicUrl, token.plaintext), minutes)
            yield* transactions.atomically(
              Effect.gen(function* () {
                const user = yield* directory.findUserByEmail(email)
                if (user === undefined) return
                const now = yield* Clock.currentTimeMillis
                yield* tokens.insert({
                  tokenHash: token.hash,
                  userId: user.id,
                  purpose: "email",
                  next: landing,
                  createdAt: isoAt(now),
                  expiresAt: isoAt(now + lifetime)
                })
                yield* mail.enqueue(message)
              })
            )
          }),
          redeem: Effect.fn("SignInLinks.redeem")(function* (token: string) {
            if (!secretHasPrefix(token, tokenPrefix)) return yield* new InvalidSignInLink()
            return yield* transactions.atomically(
              Effect.gen(function* () {
                const now = yield* Clock.currentTimeMillis
                const link = yield* tokens.redeem(hashSecret(token), isoAt(now))
                if (link === undefined) return yield* new InvalidSignInLink()
                const user = yield* directory.findUserById(link.userId)
                if (user === undefined) return yield* new InvalidSignInLink()
                // Opening the link proves the person reads that mailbox.
                if (!user.verified) yield* directory.updateUser({ ...user, verified: true })
                const session = yield* sessions.start(user.id)
                return { session, userId: user.id, next: link.next }
              })
            )
          })
        })
      })
    )
}

/** Issues a link for a user: the user's unused links of that purpose are spent first (a link replaces them). */
export const rotateLink = Effect.fn("SignInLinks.rotateLink")(function* (options: {
  readonly publicUrl: string
  readonly userId: string
  readonly purpose: SignInPurpose
  readonly next: string | null
  readonly lifetimeMillis: number
}) {
  const tokens = yield* SignInTokenStore
  const now = yield* Clock.currentTimeMillis
  const token = newLinkToken()
  yield* tokens.revokeUnused(options.userId, options.purpose, isoAt(now))
  yield* tokens.insert({
    tokenHash: token.hash,
    userId: options.userId,
    purpose: options.purpose,
    next: options.next,
    createdAt: isoAt(now),
    expiresAt: isoAt(now + options.lifetimeMillis)
  })
  return linkUrl(options.publicUrl, token.plaintext)
})
