import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Data, Email } from "../../../core/kernel/index.ts"
import { RootRelativePath } from "../../../core/kernel/RootRelativePath.ts"
import { MaxBodyBytes } from "../BodyLimit.ts"
import { ErrorResponses as E } from "../ErrorSchemas.ts"
import { reportAllIssues } from "../ParseOptions.ts"
import { HubPersonAuth } from "./PersonAuth.ts"
import { MeSchema } from "./Schemas.ts"
import { ViewerLinkGroup } from "./ViewerLinkApi.ts"

const SignInRequestFields = {
  email: Email.annotate({ description: "The address to send the sign-in link to" }),
  next: Schema.optionalKey(
    RootRelativePath.annotate({ description: "Where to land after signing in: a path of the hub (default /)" })
  )
}

export const SignInRequest = Schema.Struct(SignInRequestFields).annotate({ identifier: "EmailSignInRequest" })
const SignInForm = Schema.Struct(SignInRequestFields).pipe(HttpApiSchema.asFormUrlEncoded())

const SignInSent = Data(Schema.Struct({ status: Schema.Literal("sent") }))
  .annotate({ identifier: "EmailSignInSent" })
  .pipe(HttpApiSchema.status(202))

const optionalText = Schema.optionalKey(Schema.String.check(Schema.isMaxLength(1024)))

const ConfirmForm = Schema.Struct({
  token: Schema.String.check(Schema.isMaxLength(1024)),
  next: optionalText
}).pipe(HttpApiSchema.asFormUrlEncoded())

const ConfirmationPage = Schema.String.annotate({
  identifier: "EmailSignInConfirmation",
  description: "An HTML page asking to confirm the sign-in"
}).pipe(HttpApiSchema.asText({ contentType: "text/html" }))

/**
 * People sign in at the hub by email link (docs/sign-in.md): ask for a link, open it, and the hub keeps a
 * server-side session named by the `hub_session` cookie.
 */
export class EmailSignInGroup extends HttpApiGroup.make("emailSignIn")
  .add(
    HttpApiEndpoint.post("request", "/auth/email", {
      payload: [SignInRequest, SignInForm],
      success: SignInSent,
      error: [E.badRequest, E.rateLimited, E.notConfigured]
    })
      .annotate(MaxBodyBytes, 4 * 1024)
      .annotate(
        OpenApi.Description,
        "JSON {email, next?} or a form with the field email. 202 for every well-formed address, with the " +
          "browser's sign-in nonce (cookie hub_sign_in); only an address of the directory is sent a link " +
          "(single use, 15 minutes, at most a few an hour). 429 per client and address, and per client."
      ),
    HttpApiEndpoint.get("callback", "/auth/email/callback", {
      query: { token: optionalText, next: optionalText },
      success: [HttpApiSchema.Empty(303), ConfirmationPage],
      error: [E.unauthorized]
    }).annotate(
      OpenApi.Description,
      "The link of the email. Opened in the browser that asked for it (it holds the hub_sign_in cookie set by " +
        "the request): signs in (a new session, cookie hub_session) and redirects to the link's own landing " +
        "path, else to a root-relative `next`, else to /. Opened anywhere else: 200, a page naming the account " +
        "with a form that signs in (POST to this path); the link is not spent. A used, expired or unknown " +
        "link is 401 (an HTML page for browsers)."
    ),
    HttpApiEndpoint.post("confirm", "/auth/email/callback", {
      payload: ConfirmForm,
      success: HttpApiSchema.Empty(303),
      error: [E.badRequest, E.unauthorized, E.forbidden]
    })
      .annotate(MaxBodyBytes, 4 * 1024)
      .annotate(
        OpenApi.Description,
        "The confirmation page's form (token, next?): signs in as the callback does. 403 from another site's page."
      ),
    HttpApiEndpoint.post("logout", "/auth/logout", {
      success: [HttpApiSchema.NoContent, HttpApiSchema.Empty(303)],
      error: [E.forbidden]
    }).annotate(
      OpenApi.Description,
      "Ends the session of the hub_session cookie: 204, or 303 to / for a form post. 403 from another site's page."
    )
  )
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(OpenApi.annotations({ title: "Sign-in", description: "Email link sign-in and sessions" })) {}

/** `GET /api/v1/me`: who is signed in, and their organizations. */
export class MeGroup extends HttpApiGroup.make("me")
  .add(
    HttpApiEndpoint.get("me", "/api/v1/me", {
      success: Data(MeSchema).annotate({ identifier: "MeEnvelope" }),
      error: [E.unauthorized]
    }).annotate(OpenApi.Description, "The signed-in person (cookie hub_session) and their organizations.")
  )
  .middleware(HubPersonAuth)
  .annotateMerge(OpenApi.annotations({ title: "Me", description: "The signed-in person" })) {}

/** The sign-in groups in an API with the hub's id: what their handlers are built against (and tests serve). */
export const SignInApi = HttpApi.make("hub").add(EmailSignInGroup).add(MeGroup).add(ViewerLinkGroup)
