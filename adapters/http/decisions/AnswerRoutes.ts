import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { AnswerByLink } from "../../../core/decisions/AnswerByLink.ts"
import { answerPath } from "../../../core/decisions/AnswerLinks.ts"
import { decisionLink } from "../../../core/decisions/DecisionNotifications.ts"
import { isCrossSite } from "../CrossSite.ts"
import { answerPage, confirmationHeaders, crossSitePage, resultHeaders } from "./AnswerPages.ts"

export interface AnswerRoutesConfig {
  /** The decisions service's address as browsers reach it: the confirmation's post must come from there. */
  readonly publicUrl: string
  /** The workspace (the hub's public address): each page links to the decision there. Unset, no link. */
  readonly workspaceUrl?: string | undefined
}

const html = (answer: { readonly status: number; readonly html: string }, headers: Record<string, string>) =>
  HttpServerResponse.text(answer.html, { status: answer.status, contentType: "text/html; charset=utf-8", headers })

/**
 * The answer links' page at `/answer` (docs/decisions.md, "Answers from the message"), outside every plane:
 * the token is the credential, no session is needed. `GET` (and so `HEAD`) shows the confirmation, or what
 * became of the decision, and changes nothing; `POST` of the confirmation form (`token` in the body, from a
 * page of this service: its `Origin` is checked) answers. The token is in the query only on the GET, which
 * the request log writes without its query string. Requires AnswerByLink.
 */
export const answerRoutes = (config: AnswerRoutesConfig) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const router = yield* HttpRouter.HttpRouter
      const answers = yield* AnswerByLink
      const workspace = config.workspaceUrl?.replace(/\/+$/, "")
      const link = (decisionId: string) =>
        workspace === undefined ? undefined : `${workspace}${decisionLink(decisionId)}`

      const show = Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const token = new URL(request.url, "http://answer.invalid").searchParams.get("token") ?? ""
        const state = yield* answers.preview(token)
        const answer = answerPage(state, { action: answerPath, token, link })
        return html(answer, state._tag === "Ready" ? confirmationHeaders : resultHeaders)
      })

      const confirm = Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (isCrossSite(request, config.publicUrl)) return html(crossSitePage, resultHeaders)
        const body = yield* Effect.orElseSucceed(request.text, () => "")
        const token = new URLSearchParams(body).get("token") ?? ""
        const state = yield* answers.answer(token)
        return html(answerPage(state, { action: answerPath, token: "", link }), resultHeaders)
      })

      yield* router.add("GET", answerPath, show)
      yield* router.add("POST", answerPath, confirm)
    })
  )
