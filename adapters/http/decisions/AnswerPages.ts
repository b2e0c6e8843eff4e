import type { AnswerLinkState } from "../../../core/decisions/AnswerByLink.ts"
import { settledBody } from "../../../core/decisions/DecisionNotifications.ts"

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

const baseHeaders = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"
}

/**
 * What the confirmation page (its address holds the token) is sent with. Its referrer policy gives the origin
 * alone, never the address: the token never leaves in a Referer. It is not `no-referrer`, because with that
 * a browser sends `Origin: null` with the form's post, and the post's `Origin` is checked.
 */
export const confirmationHeaders = { ...baseHeaders, "referrer-policy": "strict-origin" }

/** What every other answer page is sent with: no address to hide, and no Referer at all. */
export const resultHeaders = { ...baseHeaders, "referrer-policy": "no-referrer" }

const page = (title: string, inner: string, workspaceLink: string | undefined) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
  `<title>${escapeHtml(title)}</title></head><body><main><h1>${escapeHtml(title)}</h1>${inner}` +
  (workspaceLink === undefined
    ? ""
    : `<p><a href="${escapeHtml(workspaceLink)}" rel="noreferrer">Open the decision in the workspace</a></p>`) +
  `</main></body></html>`

const p = (text: string) => `<p>${escapeHtml(text)}</p>`

/** The outcome of a decision as its page says it; nothing when it is still open. */
const outcome = (state: Extract<AnswerLinkState, { readonly decision: unknown }>) =>
  state.decision.status === "pending" || state.decision.status === "needs_info" ? "" : p(settledBody(state.decision))

/** The answer to a confirmation posted from another site's page: nothing is done. */
export const crossSitePage = {
  status: 403,
  html: page(
    "This answer was not sent from its own page",
    p("Nothing was recorded. Open the link from your email or chat message again and confirm there."),
    undefined
  )
}

/**
 * The page for a link's state. `Ready` holds the confirmation form: a POST of the token to `action`, the only
 * request that answers. Every value shown is escaped; `link(decisionId)` is the decision's workspace page.
 */
export const answerPage = (
  state: AnswerLinkState,
  options: {
    readonly action: string
    readonly token: string
    readonly link: (decisionId: string) => string | undefined
  }
): { readonly status: number; readonly html: string } => {
  switch (state._tag) {
    case "Invalid":
      return {
        status: 404,
        html: page(
          "This link cannot be used",
          p("It was not copied whole, or it does not answer any decision here. Open the decision in your workspace."),
          undefined
        )
      }
    case "Expired":
      return {
        status: 410,
        html: page("This link has expired", p("Open the decision in your workspace to answer it."), undefined)
      }
    case "Used":
      return {
        status: 409,
        html: page(
          "This link was used already",
          p(`A link answers once. ${state.decision.title}`) + outcome(state),
          options.link(state.decision.id)
        )
      }
    case "Settled":
      return {
        status: 409,
        html: page(
          "This decision is closed",
          p(state.decision.title) + p(settledBody(state.decision)),
          options.link(state.decision.id)
        )
      }
    case "NotAllowed":
      return {
        status: 403,
        html: page(
          "You can no longer answer this decision",
          p(`${state.decision.title}: only holders of its role or its assignee may answer it.`),
          options.link(state.decision.id)
        )
      }
    case "Ready":
      return {
        status: 200,
        html: page(
          `Answer "${state.answer}"?`,
          p(state.decision.title) +
            p(`You answer as ${state.email}. Nothing is recorded until you confirm.`) +
            `<form method="post" action="${escapeHtml(options.action)}">` +
            `<input type="hidden" name="token" value="${escapeHtml(options.token)}">` +
            `<button type="submit">Confirm: ${escapeHtml(state.answer)}</button></form>`,
          options.link(state.decision.id)
        )
      }
    case "Answered":
      return {
        status: 200,
        html: page(
          "Your answer is recorded",
          p(state.decision.title) + p(`${state.email} answered: ${state.answer}.`) + outcome(state),
          options.link(state.decision.id)
        )
      }
  }
}
