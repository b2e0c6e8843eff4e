import { Effect, Layer, Schedule } from "effect"
import { MailOutboxMemory } from "../../../adapters/memory/hub/MailOutboxMemory.ts"
import { SessionStoreMemory } from "../../../adapters/memory/hub/SessionStoreMemory.ts"
import { SignInRequestStoreMemory } from "../../../adapters/memory/hub/SignInRequestStoreMemory.ts"
import {
  ExternalViewerStoreMemory,
  SignInTokenStoreMemory
} from "../../../adapters/memory/hub/SignInTokenStoreMemory.ts"
import { MailOutboxSql } from "../../../adapters/sql/hub/MailOutboxSql.ts"
import { SessionStoreSql } from "../../../adapters/sql/hub/SessionStoreSql.ts"
import { SignInRequestStoreSql } from "../../../adapters/sql/hub/SignInRequestStoreSql.ts"
import { ExternalViewerStoreSql, SignInTokenStoreSql } from "../../../adapters/sql/hub/SignInTokenStoreSql.ts"
import { MailDeliveries } from "../../../core/hub/MailDeliveries.ts"
import { Sessions, type SessionPolicy } from "../../../core/hub/Sessions.ts"
import { SignInLinks } from "../../../core/hub/SignInLinks.ts"
import { SignInRequestStore } from "../../../core/hub/SignInRequestStore.ts"
import { SignInTokenStore } from "../../../core/hub/SignInTokenStore.ts"
import { ViewerLinks } from "../../../core/hub/ViewerLinks.ts"
import { isoAt } from "../../../core/kernel/Timestamp.ts"
import { Clock } from "effect"

/**
 * Sessions, sign-in links and their requests, external viewers and the mail outbox over the `hub` schema
 * (0006_sign_in.ts, 0012_sign_in_requests.ts). Needs units of work: a request wakes the worker once it commits.
 */
export const HubSignInStoresSql = Layer.mergeAll(
  SessionStoreSql,
  SignInTokenStoreSql,
  SignInRequestStoreSql,
  ExternalViewerStoreSql,
  MailOutboxSql
)

export const HubSignInStoresMemory = Layer.mergeAll(
  SessionStoreMemory,
  SignInTokenStoreMemory,
  SignInRequestStoreMemory,
  ExternalViewerStoreMemory,
  MailOutboxMemory
)

export interface HubSignInConfig {
  /** Where people's browsers reach the hub: the base of every link. */
  readonly publicUrl: string
  readonly sessions: SessionPolicy
  readonly emailLinkMillis: number
  /** The most emailed links one person is sent an hour (3 unless given). */
  readonly emailLinksPerHour?: number | undefined
  readonly viewerLinkMillis: number
  /** `HUB_SECRETS_KEY`: seals queued emails; unset, sign-in by email answers 501. */
  readonly secretsKey: string | undefined
  readonly mailRetrySeconds?: ReadonlyArray<number> | undefined
}

/**
 * Sessions, email and viewer links, and mail delivery. Needs the stores (above), Directory, IdGenerator,
 * Transactions and a Mailer.
 */
export const HubSignInLayer = (config: HubSignInConfig) =>
  Layer.mergeAll(
    SignInLinks.layer({
      publicUrl: config.publicUrl,
      emailLinkMillis: config.emailLinkMillis,
      emailLinksPerHour: config.emailLinksPerHour
    }),
    ViewerLinks.layer({ publicUrl: config.publicUrl, linkMillis: config.viewerLinkMillis })
  ).pipe(
    Layer.provideMerge(
      Layer.merge(
        Sessions.layer(config.sessions),
        MailDeliveries.layer({ secretsKey: config.secretsKey, retrySeconds: config.mailRetrySeconds })
      )
    )
  )

/**
 * The sign-in link worker (takes the requests for links, each in a unit of its own that stores the link and
 * queues its email, or drops the request; then sleeps until a request is added on any instance or
 * `pollMillis` pass), the mail worker (sends what is due, then sleeps until a message is queued or
 * `pollMillis` pass; it claims with leases, so several servers run it side by side) and an hourly sweep of
 * ended sessions and old links.
 */
export const HubSignInWorkers = (pollMillis: number) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const links = yield* SignInLinks
      const requests = yield* SignInRequestStore
      const issue = Effect.gen(function* () {
        while ((yield* links.sendRequested()) > 0) {
          /* more may be waiting */
        }
      })
      yield* issue.pipe(
        Effect.catchCause((cause) => Effect.logWarning("sending sign-in links failed; retrying", cause)),
        Effect.andThen(requests.awaitAdded(pollMillis)),
        Effect.forever,
        Effect.forkScoped
      )
      const mail = yield* MailDeliveries
      const sessions = yield* Sessions
      const tokens = yield* SignInTokenStore
      const drain = Effect.gen(function* () {
        while ((yield* mail.runDue()) > 0) {
          /* more may be due */
        }
      })
      yield* drain.pipe(
        Effect.catchCause((cause) => Effect.logWarning("mail delivery failed; retrying", cause)),
        Effect.andThen(mail.sleep(pollMillis)),
        Effect.forever,
        Effect.forkScoped
      )
      const sweep = Effect.gen(function* () {
        yield* sessions.purge
        // Links are kept a day past their end, so a late click still meets "used or expired", then forgotten.
        yield* tokens.purge(isoAt((yield* Clock.currentTimeMillis) - 24 * 60 * 60_000))
      })
      yield* sweep.pipe(
        Effect.catchCause((cause) => Effect.logWarning("sweeping ended sessions failed; retrying", cause)),
        Effect.delay("1 minute"),
        Effect.repeat(Schedule.spaced("1 hour")),
        Effect.forkScoped
      )
    })
  )
