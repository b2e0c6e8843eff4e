import { Clock, Context, Effect, Layer, Schema } from "effect"
import { hashSecret, issueSecret, secretHasPrefix, verifySecret } from "../auth/IssuedSecret.ts"
import { normalizeEmail } from "../kernel/Email.ts"
import { NotConfigured } from "../kernel/Errors.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import type { MailMessage } from "../kernel/Mailer.ts"
import { isRootRelativePath } from "../kernel/RootRelativePath.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { Transactions } from "../kernel/Transactions.ts"
import { Directory } from "./Directory.ts"
import { MailDeliveries } from "./MailDeliveries.ts"
import { Sessions, type StartedSession } from "./Sessions.ts"
import { SignInRequestStore } from "./SignInRequestStore.ts"
import { SignInTokenStore, type SignInPurpose } from "./SignInTokenStore.ts"

/** The longest an emailed sign-in link may live. */
export const maxEmailLinkMillis = 15 * 60_000

export interface SignInLinksConfig {
  /** Where people's browsers reach the hub (no trailing slash): links are `<it>/auth/email/callback?token=…`. */
  readonly publicUrl: string
  /** How long an emailed link works, counted from the request; at most 15 minutes. */
  readonly emailLinkMillis?: number | undefined
  /** The most emailed links one person is sent in an hour, whoever asks; requests past it send nothing. */
  readonly emailLinksPerHour?: number | undefined
}

/** Three links an hour: enough for a person who mistyped or lost one, too few to flood their mailbox. */
export const defaultEmailLinksPerHour = 3

/** A link that is unknown, mistyped, expired or already used: one answer for all, so none is told apart. */
export class InvalidSignInLink extends Schema.TaggedError<InvalidSignInLink>()("InvalidSignInLink", {}) {}

export interface SignedIn {
  readonly session: StartedSession
  readonly userId: string
  /** Where the link lands (a root-relative path of the hub), or null for the caller's choice. */
  readonly next: string | null
}

/** Whom a link signs in, told before it is spent, so that a browser that did not ask can be asked first. */
export interface LinkPreview {
  readonly userId: string
  readonly email: string
  readonly purpose: SignInPurpose
  /** True for an emailed link opened in the browser that asked for it (it holds the nonce the link keeps). */
  readonly askedHere: boolean
}

/** Link secrets are `sl_` then 256 random bits; anything else is refused before any lookup. */
const tokenPrefix = "sl_"

/** A browser's sign-in nonce (its `hub_sign_in` cookie) is `sn_` then 256 random bits. */
const browserNoncePrefix = "sn_"

export const callbackPath = "/auth/email/callback"

/** A new link secret: the plaintext goes into the link only; its hash is what the store keeps. */
export const newLinkToken = () => issueSecret(tokenPrefix)

/** A new browser nonce: the plaintext goes into the asking browser's cookie only; links keep its hash. */
export const newBrowserNonce = () => issueSecret(browserNoncePrefix)

/** True for a value shaped as a browser nonce this hub issues. */
export const isBrowserNonce = (value: string) => secretHasPrefix(value, browserNoncePrefix)

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

const hourMillis = 60 * 60_000

/** How many requests one pass of the worker takes at most, each in a unit of its own. */
const requestsPerPass = 20

/**
 * Sign-in by link (docs/sign-in.md). `requestEmailLink` does the same work for every well-formed address:
 * it writes one request, bound to the asking browser's nonce, and nothing else, so neither the answer nor
 * its work tells a known address from an unknown one. `sendRequested`, run by a worker off the request's
 * path, takes the requests one unit of work each: for an address of the directory under its hourly cap it
 * stores the link's hash and queues the email; any other request it drops. `preview` tells whom a link signs
 * in without spending it; `redeem` turns a link into a new session once: the link is spent and the session
 * made in one unit.
 */
export class SignInLinks extends Context.Service<
  SignInLinks,
  {
    readonly requestEmailLink: (
      email: string,
      next: string | undefined,
      browserHash: string
    ) => Effect.Effect<void, NotConfigured>
    /** Handles the requests waiting, up to a pass's worth; answers how many it took. */
    readonly sendRequested: () => Effect.Effect<number>
    readonly preview: (token: string, browserNonce: string | undefined) => Effect.Effect<LinkPreview, InvalidSignInLink>
    readonly redeem: (token: string) => Effect.Effect<SignedIn, InvalidSignInLink>
  }
>()("core/hub/SignInLinks") {
  static readonly layer = (
    config: SignInLinksConfig
  ): Layer.Layer<
    SignInLinks,
    never,
    Directory | SignInTokenStore | SignInRequestStore | Sessions | MailDeliveries | Transactions | IdGenerator
  > =>
    Layer.effect(
      SignInLinks,
      Effect.gen(function* () {
        const directory = yield* Directory
        const tokens = yield* SignInTokenStore
        const requests = yield* SignInRequestStore
        const sessions = yield* Sessions
        const mail = yield* MailDeliveries
        const transactions = yield* Transactions
        const ids = yield* IdGenerator
        const lifetime = Math.min(config.emailLinkMillis ?? maxEmailLinkMillis, maxEmailLinkMillis)
        const perHour = config.emailLinksPerHour ?? defaultEmailLinksPerHour

        /** Takes one request and sends its link, or drops it; false when none was waiting. */
        const sendOne = transactions
          .atomically(
            Effect.gen(function* () {
              const request = yield* requests.takeOldest()
              if (request === undefined) return false
              const now = yield* Clock.currentTimeMillis
              const expiresAt = Date.parse(request.createdAt) + lifetime
              // Asked too long ago (the hub was down, say): its link would be dead on arrival.
              if (!mail.configured || expiresAt <= now) return true
              const user = yield* directory.findUserByEmail(request.email)
              if (user === undefined) return true
              // The person is sent a few links an hour, whoever asks; past that the request is answered, not sent.
              if ((yield* tokens.countIssuedSince(user.id, "email", isoAt(now - hourMillis))) >= perHour) {
                yield* Effect.logInfo("a sign-in link was asked for past the hourly cap of its address; not sent")
                return true
              }
              const token = newLinkToken()
              yield* tokens.insert({
                tokenHash: token.hash,
                userId: user.id,
                purpose: "email",
                next: request.next,
                createdAt: isoAt(now),
                expiresAt: isoAt(expiresAt),
                browserHash: request.browserHash
              })
              const minutes = Math.max(1, Math.floor((expiresAt - now) / 60_000))
              yield* mail.enqueue(signInEmail(user.email, linkUrl(config.publicUrl, token.plaintext), minutes))
              return true
            })
          )
          .pipe(Effect.catchTag("NotConfigured", () => Effect.succeed(true)))

        return SignInLinks.of({
          requestEmailLink: Effect.fn("SignInLinks.requestEmailLink")(function* (
            address: string,
            next: string | undefined,
            browserHash: string
          ) {
            // Checked first, so a server that cannot send answers every address the same.
            if (!mail.configured) return yield* new NotConfigured({ message: "Sign-in by email is not configured." })
            const request = {
              id: yield* ids.next,
              email: normalizeEmail(address),
              next: next !== undefined && isRootRelativePath(next) ? next : null,
              browserHash,
              createdAt: isoAt(yield* Clock.currentTimeMillis)
            }
            yield* transactions.atomically(requests.add(request))
          }),
          sendRequested: Effect.fn("SignInLinks.sendRequested")(function* () {
            let taken = 0
            while (taken < requestsPerPass && (yield* sendOne)) taken++
            return taken
          }),
          preview: Effect.fn("SignInLinks.preview")(function* (token: string, browserNonce: string | undefined) {
            if (!secretHasPrefix(token, tokenPrefix)) return yield* new InvalidSignInLink()
            const link = yield* tokens.find(hashSecret(token), isoAt(yield* Clock.currentTimeMillis))
            if (link === undefined) return yield* new InvalidSignInLink()
            const user = yield* directory.findUserById(link.userId)
            if (user === undefined) return yield* new InvalidSignInLink()
            const askedHere =
              link.browserHash !== null &&
              browserNonce !== undefined &&
              isBrowserNonce(browserNonce) &&
              verifySecret(browserNonce, link.browserHash)
            return { userId: user.id, email: user.email, purpose: link.purpose, askedHere }
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
    expiresAt: isoAt(now + options.lifetimeMillis),
    browserHash: null
  })
  return linkUrl(options.publicUrl, token.plaintext)
})
