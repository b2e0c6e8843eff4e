import { Clock, Context, Effect, Layer } from "effect"
import { normalizeEmail } from "../kernel/Email.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import { isRootRelativePath } from "../kernel/RootRelativePath.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { Transactions } from "../kernel/Transactions.ts"
import { ValidationError } from "../kernel/Errors.ts"
import { bodyIssue } from "../kernel/FieldIssue.ts"
import { Directory } from "./Directory.ts"
import { rotateLink } from "./SignInLinks.ts"
import { ExternalViewerStore, SignInTokenStore } from "./SignInTokenStore.ts"

export interface ViewerLinkRequest {
  /** The viewer's address. */
  readonly email: string
  /** Who invited them (kept for the audit record). */
  readonly invitedByEmail: string
  /** Where the link lands: a root-relative path of the hub. */
  readonly landingPath: string
}

export interface ViewerLink {
  /** Absolute; opening it signs the viewer in and lands on `landingPath`. */
  readonly url: string
  /** True when this call made the workspace account. */
  readonly created: boolean
}

export interface ViewerLinksConfig {
  readonly publicUrl: string
  /** How long a viewer link works (it is spent by its first use, or by the next call for the same viewer). */
  readonly linkMillis: number
}

/**
 * Viewer links for the meeting-recaps service: an external viewer account (a directory user recorded as
 * invited to view) is found or made, and every call issues a new single-use sign-in link, which spends the
 * viewer's previous one (so the call is not idempotent). A service never gets a sign-in link for a
 * workspace account it did not make as a viewer: for such an address the answer is the plain landing URL,
 * where the person signs in as usual.
 */
export class ViewerLinks extends Context.Service<
  ViewerLinks,
  { readonly issue: (request: ViewerLinkRequest) => Effect.Effect<ViewerLink, ValidationError> }
>()("core/hub/ViewerLinks") {
  static readonly layer = (
    config: ViewerLinksConfig
  ): Layer.Layer<ViewerLinks, never, Directory | ExternalViewerStore | SignInTokenStore | IdGenerator | Transactions> =>
    Layer.effect(
      ViewerLinks,
      Effect.gen(function* () {
        const directory = yield* Directory
        const viewers = yield* ExternalViewerStore
        const tokens = yield* SignInTokenStore
        const ids = yield* IdGenerator
        const transactions = yield* Transactions
        return ViewerLinks.of({
          issue: Effect.fn("ViewerLinks.issue")(function* (request: ViewerLinkRequest) {
            if (!isRootRelativePath(request.landingPath)) {
              return yield* new ValidationError({
                message: "landingPath must be a path on this site starting with a single /.",
                details: [bodyIssue("landingPath", "must be a root-relative path")]
              })
            }
            const email = normalizeEmail(request.email)
            return yield* transactions.atomically(
              Effect.gen(function* () {
                const now = isoAt(yield* Clock.currentTimeMillis)
                let user = yield* directory.findUserByEmail(email)
                let created = false
                if (user === undefined) {
                  const fresh = { id: yield* ids.next, email, name: null, verified: false, createdAt: now }
                  if ((yield* directory.createUser(fresh)) === "created") {
                    created = true
                    user = fresh
                    yield* viewers.add({
                      userId: fresh.id,
                      invitedByEmail: normalizeEmail(request.invitedByEmail),
                      createdAt: now
                    })
                  } else user = yield* directory.findUserByEmail(email)
                }
                const viewer = user === undefined ? undefined : yield* viewers.find(user.id)
                if (user === undefined || viewer === undefined) {
                  return { url: `${config.publicUrl}${request.landingPath}`, created }
                }
                const url = yield* rotateLink({
                  publicUrl: config.publicUrl,
                  userId: user.id,
                  purpose: "viewer",
                  next: request.landingPath,
                  lifetimeMillis: config.linkMillis
                }).pipe(Effect.provideService(SignInTokenStore, tokens))
                return { url, created }
              })
            )
          })
        })
      })
    )
}
