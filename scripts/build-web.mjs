/**
 * `npm run build:web`: builds the browser apps under apps/web (the hub's workspace, the task inbox's app) with
 * Vite into node_modules/.cache/hitl-web/<app>, where the services serve them from (adapters/http/StaticApp.ts).
 *
 * Offline and skipped when nothing changed: each built app holds a fingerprint (a hash of every file under
 * apps/web, package-lock.json and this script) in `.complete`, written last. A build goes to a temporary
 * directory that replaces the app's directory in two renames, so a server never reads half an app.
 *
 * `node scripts/build-web.mjs` builds what is stale and exits; `--if-available` exits quietly (0) when Vite
 * is not installed (an install without dev dependencies serves the apps built before pruning); `--force`
 * rebuilds. Also called by `prepare`, by `npm start` and by the tests' global setup.
 */
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join, relative, resolve } from "node:path"
import { pathToFileURL } from "node:url"

const root = resolve(import.meta.dirname, "..")
const webRoot = join(root, "apps", "web")
export const webCacheRoot = join(root, "node_modules", ".cache", "hitl-web")
export const webApps = ["workspace", "tasks"]
const completeMarker = ".complete"
/** Phones on slow networks load these apps: all of an app's script together stays under this. */
const scriptBudgetBytes = 300 * 1024

const filesUnder = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((item) => {
    const path = join(dir, item.name)
    if (item.isDirectory()) return item.name === "node_modules" ? [] : filesUnder(path)
    return [path]
  })

const fingerprint = () => {
  const hash = createHash("sha256")
  const files = [
    join(root, "package-lock.json"),
    join(root, "scripts", "build-web.mjs"),
    ...(existsSync(webRoot) ? filesUnder(webRoot) : [])
  ].filter((path) => existsSync(path))
  for (const file of files.map((path) => relative(root, path)).sort()) {
    hash.update(`\0${file}\0`)
    hash.update(readFileSync(join(root, file)))
  }
  return hash.digest("hex").slice(0, 20)
}

const builtFingerprint = (app) => {
  try {
    return JSON.parse(readFileSync(join(webCacheRoot, app, completeMarker), "utf8")).fingerprint
  } catch {
    return undefined
  }
}

const loadVite = async () => {
  try {
    return await import(pathToFileURL(createRequire(join(root, "package.json")).resolve("vite")).href)
  } catch {
    return undefined
  }
}

/** One app: apps/web/<app>/index.html and what it imports (apps/web/shared too), hashed assets under assets/. */
const buildApp = async (vite, app, print) => {
  const target = join(webCacheRoot, app)
  // An app's service worker (apps/web/<app>/sw.ts) is built beside index.html under the fixed name sw.js: a
  // worker's address must not change between builds, and at the root its scope is the whole app.
  const serviceWorker = join(webRoot, app, "sw.ts")
  const entries = existsSync(serviceWorker)
    ? {
        input: { index: join(webRoot, app, "index.html"), sw: serviceWorker },
        output: {
          entryFileNames: (chunk) => (chunk.name === "sw" ? "sw.js" : "assets/[name]-[hash].js")
        }
      }
    : {}
  const temporary = `${target}.tmp-${process.pid}`
  rmSync(temporary, { recursive: true, force: true })
  mkdirSync(webCacheRoot, { recursive: true })
  try {
    await vite.build({
      root: join(webRoot, app),
      base: "/",
      configFile: false,
      envDir: false,
      publicDir: false,
      logLevel: "warn",
      clearScreen: false,
      // Always a production build, whatever NODE_ENV says (the tests run with NODE_ENV=test): no file names
      // or development checks in the bundle.
      mode: "production",
      define: { "process.env.NODE_ENV": JSON.stringify("production") },
      // Preact's automatic JSX runtime (no React plugin needed), in its production form.
      oxc: { jsx: { runtime: "automatic", importSource: "preact", development: false } },
      resolve: { alias: [{ find: /^react(-dom)?$/, replacement: "preact/compat" }] },
      build: {
        outDir: temporary,
        emptyOutDir: true,
        target: "es2022",
        // No inline script anywhere: the apps are served under `script-src 'self'`.
        modulePreload: { polyfill: false },
        assetsInlineLimit: 0,
        sourcemap: false,
        reportCompressedSize: false,
        chunkSizeWarningLimit: 300,
        rolldownOptions: entries
      }
    })
    const scriptBytes = filesUnder(temporary)
      .filter((path) => path.endsWith(".js"))
      .reduce((total, path) => total + statSync(path).size, 0)
    if (scriptBytes > scriptBudgetBytes) {
      throw new Error(`the ${app} app has ${Math.round(scriptBytes / 1024)} KB of script, over its budget of 300 KB`)
    }
    writeFileSync(join(temporary, completeMarker), JSON.stringify({ fingerprint: print, scriptBytes }))
  } catch (error) {
    rmSync(temporary, { recursive: true, force: true })
    throw error
  }
  const previous = `${target}.old-${process.pid}`
  if (existsSync(target)) renameSync(target, previous)
  renameSync(temporary, target)
  rmSync(previous, { recursive: true, force: true })
}

/** Builds every app whose fingerprint differs from the sources'; answers the apps built. */
export const buildWeb = async ({ force = false, ifAvailable = false } = {}) => {
  const print = fingerprint()
  const stale = webApps.filter((app) => force || builtFingerprint(app) !== print)
  if (stale.length === 0) return []
  const vite = await loadVite()
  if (vite === undefined) {
    if (ifAvailable) return []
    throw new Error("Vite is not installed: run `npm install` with the dev dependencies")
  }
  process.stderr.write(`Building the web apps (${stale.join(", ")}) ...\n`)
  for (const app of stale) await buildApp(vite, app, print)
  return stale
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  try {
    await buildWeb({ force: process.argv.includes("--force"), ifAvailable: process.argv.includes("--if-available") })
  } catch (error) {
    process.stderr.write(`build:web: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  }
}
