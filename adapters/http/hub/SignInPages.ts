const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

/**
 * A plain page for what a browser meets during sign-in (a refused or expired sign-in, a feature not set up):
 * no script, no style from elsewhere, the text escaped.
 */
export const htmlPage = (title: string, text: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
  `<title>${escapeHtml(title)}</title></head><body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>` +
  `<p><a href="/">Back to the hub</a></p></main></body></html>`

/**
 * What a confirmation page is sent with: never kept, never framed (a framed button could be clicked blind).
 * Its referrer policy gives the origin alone, never the link's address, and keeps the `Origin` of the form's
 * post, which the hub checks: with `no-referrer` a browser sends `Origin: null`, which reads as another site.
 */
export const confirmationHeaders = {
  "cache-control": "no-store",
  "referrer-policy": "strict-origin",
  "x-frame-options": "DENY",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"
}

/**
 * The page a browser meets when it opens a sign-in link it did not ask for: it names the account the link
 * signs into and, when the browser holds another person's session, says that continuing signs them out. Only
 * its form (a POST to `action` from the hub's own page) signs in. Every value shown is escaped.
 */
export const confirmSignInPage = (options: {
  readonly action: string
  readonly account: string
  readonly signedInAs: string | undefined
  readonly fields: Readonly<Record<string, string>>
}) => {
  const title = "Sign in with this link?"
  const hidden = Object.entries(options.fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("")
  const signOut =
    options.signedInAs === undefined
      ? ""
      : `<p><strong>You are signed in here as ${escapeHtml(options.signedInAs)}. Continuing signs ` +
        `${escapeHtml(options.signedInAs)} out of this browser.</strong></p>`
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
    `<title>${escapeHtml(title)}</title></head><body><main><h1>${escapeHtml(title)}</h1>` +
    `<p>This link signs in as <strong>${escapeHtml(options.account)}</strong>. It was asked for from another ` +
    `browser. Continue only if you asked for it yourself: someone else's link would sign you into their ` +
    `account.</p>${signOut}` +
    `<form method="post" action="${escapeHtml(options.action)}">${hidden}` +
    `<button type="submit">Sign in as ${escapeHtml(options.account)}</button></form>` +
    `<p><a href="/">Cancel</a></p></main></body></html>`
  )
}
