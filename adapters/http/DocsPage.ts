import type { OpenApi } from "effect/http-api"

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

const methods = ["get", "post", "put", "patch", "delete"] as const

/**
 * A self-contained, human-readable page for an OpenAPI document: every operation with its parameters,
 * body and answers. No script, no external asset, so it works offline and behind strict CSPs.
 */
export const renderDocsPage = (spec: OpenApi.OpenAPISpec, openapiPath: string): string => {
  const sections: Array<string> = []
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const method of methods) {
      const op = (item as Record<string, any>)[method]
      if (op === undefined) continue
      const params = ((op.parameters ?? []) as Array<any>)
        .map(
          (p) =>
            `<li><code>${escape(p.name)}</code> <em>${escape(p.in)}</em>${p.required ? " (required)" : ""}${p.description ? ` — ${escape(p.description)}` : ""}</li>`
        )
        .join("")
      const responses = Object.entries((op.responses ?? {}) as Record<string, any>)
        .map(([status, r]) => `<li><code>${escape(status)}</code> ${escape(r.description ?? "")}</li>`)
        .join("")
      const security = ((op.security ?? []) as Array<Record<string, unknown>>).flatMap((s) => Object.keys(s))
      sections.push(`<section>
<h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${escape(path)}</code></h3>
${op.summary ? `<p>${escape(op.summary)}</p>` : ""}${op.description ? `<p>${escape(op.description)}</p>` : ""}
${security.length > 0 ? `<p>Credentials: ${security.map((s) => `<code>${escape(s)}</code>`).join(", ")}</p>` : ""}
${params ? `<h4>Parameters</h4><ul>${params}</ul>` : ""}
${op.requestBody ? "<h4>Body</h4><p>JSON; see the schema in the OpenAPI document.</p>" : ""}
<h4>Answers</h4><ul>${responses}</ul>
</section>`)
    }
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(spec.info.title)} — API</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
section{border-top:1px solid #ddd;padding:.5rem 0}code{background:#f4f4f5;padding:0 .25rem;border-radius:3px}
.m{display:inline-block;min-width:4.5rem;font-size:.8rem;color:#fff;border-radius:3px;text-align:center;padding:.1rem .3rem}
.get{background:#2563eb}.post{background:#16a34a}.put{background:#9333ea}.patch{background:#d97706}.delete{background:#dc2626}
</style></head><body>
<h1>${escape(spec.info.title)}</h1>
<p>Version ${escape(spec.info.version)}. Machine-readable: <a href="${openapiPath}">JSON</a>, <a href="${openapiPath}?format=yaml">YAML</a>.</p>
${sections.join("\n")}
</body></html>`
}
