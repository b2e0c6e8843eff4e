import { Effect } from "effect"
import { HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { extname, join, relative, sep } from "node:path"

/**
 * The policy every page of a web app is served under: its own scripts, styles and API only, nothing inline,
 * never framed. The apps are built to fit it (no inline script or style, no third-party asset).
 */
export const contentSecurityPolicy =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

/** Paths a web app never answers: they belong to the service's API, its sign-in and its published metadata. */
export const reservedPrefixes: ReadonlyArray<string> = ["/api", "/auth", "/.well-known", "/oidc"]

export interface StaticAppOptions {
  /** A built app: index.html and hashed assets under assets/ (scripts/build-web.mjs). */
  readonly directory: string
  /** Further path prefixes the app must not answer, beside `reservedPrefixes`. */
  readonly reserved?: ReadonlyArray<string> | undefined
  /** `<meta name content>` pairs written into index.html: settings the app reads without a request. */
  readonly meta?: Readonly<Record<string, string>> | undefined
}

interface Asset {
  readonly body: Uint8Array
  readonly contentType: string
  readonly etag: string
  readonly cacheControl: string
}

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".webp": "image/webp",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
  ".webmanifest": "application/manifest+json"
}

// Vite names every built asset after a hash of its content: a new build is a new name, so it never goes stale.
const immutable = "public, max-age=31536000, immutable"

const escapeAttribute = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

const asset = (path: string, body: Uint8Array): Asset => ({
  body,
  contentType: contentTypes[extname(path).toLowerCase()] ?? "application/octet-stream",
  etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`,
  cacheControl: path.startsWith("/assets/") ? immutable : "no-cache"
})

const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((item) => {
    const path = join(dir, item.name)
    if (item.name.startsWith(".")) return []
    return item.isDirectory() ? filesUnder(path) : [path]
  })

const notBuiltPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Not built</title></head><body><main><h1>This web app is not built</h1>
<p>Run <code>npm run build:web</code> (or <code>npm start</code>, which builds it) and reload.</p></main></body></html>`

/**
 * Reads a built app into memory (a few hundred kilobytes): a server keeps serving the build it started with,
 * index.html and its assets always from the same build, whatever a later build writes to disk.
 */
const loadApp = (options: StaticAppOptions) =>
  Effect.gen(function* () {
    const assets = new Map<string, Asset>()
    if (!existsSync(join(options.directory, ".complete"))) {
      yield* Effect.logWarning("a web app is not built; run `npm run build:web`").pipe(
        Effect.annotateLogs({ directory: options.directory })
      )
      assets.set("/index.html", asset("/index.html", new TextEncoder().encode(notBuiltPage)))
      return assets
    }
    for (const file of filesUnder(options.directory)) {
      const path = `/${relative(options.directory, file).split(sep).join("/")}`
      let body: Uint8Array = readFileSync(file)
      if (path === "/index.html" && options.meta !== undefined) {
        const tags = Object.entries(options.meta)
          .map(([name, content]) => `<meta name="${escapeAttribute(name)}" content="${escapeAttribute(content)}" />`)
          .join("\n    ")
        body = new TextEncoder().encode(new TextDecoder().decode(body).replace("</head>", `    ${tags}\n  </head>`))
      }
      assets.set(path, asset(path, body))
    }
    return assets
  })

const securityHeaders = {
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin"
}

const notFound = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.fail(new HttpServerError.HttpServerError({ reason: new HttpServerError.RouteNotFound({ request }) }))

const isReserved = (path: string, prefixes: ReadonlyArray<string>) =>
  prefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))

/**
 * Serves a built web app on a service's router: its files by path, and index.html for every other GET path
 * without a file extension (the app routes in the browser). Routes the service declares win over it; the
 * reserved prefixes are never answered with the app (an unknown API path stays the service's 404). Every
 * answer carries the strict CSP; hashed assets are cached for a year, index.html is revalidated each time.
 */
export const staticAppRoutes = (options: StaticAppOptions) =>
  HttpRouter.use(
    Effect.fnUntraced(function* (router) {
      const assets = yield* loadApp(options)
      const reserved = [...reservedPrefixes, ...(options.reserved ?? [])]
      const index = assets.get("/index.html")!

      const respond = (request: HttpServerRequest.HttpServerRequest, file: Asset) =>
        request.headers["if-none-match"] === file.etag
          ? HttpServerResponse.empty({
              status: 304,
              headers: { ...securityHeaders, etag: file.etag, "cache-control": file.cacheControl }
            })
          : HttpServerResponse.uint8Array(file.body, {
              contentType: file.contentType,
              headers: { ...securityHeaders, etag: file.etag, "cache-control": file.cacheControl }
            })

      const handler = Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const path = new URL(request.url, "http://local").pathname
        if (isReserved(path, reserved)) return yield* notFound(request)
        const file = assets.get(path === "/" ? "/index.html" : path)
        if (file !== undefined) return respond(request, file)
        // A missing file (a stale asset name) is a 404, not the app's page in its place.
        if (path.slice(path.lastIndexOf("/") + 1).includes(".")) return yield* notFound(request)
        return respond(request, index)
      })
      yield* router.add("GET", "/*", handler)
    })
  )
