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
