/**
 * `npm start`: runs the bundled server as compiled JavaScript, so no start pays for compiling TypeScript or
 * for loading hundreds of modules one by one.
 *
 * The compiled server is kept under node_modules/.cache/hitl-server/<fingerprint>, the fingerprint being a
 * hash of every source file under core/, adapters/ and apps/, the tsconfig files, package.json and its lock
 * file. When none matches (a fresh clone, an edited file, an upgraded dependency) it is compiled first,
 * in about a second: esbuild bundles the server and its dependencies into one module (PGlite stays in
 * node_modules), without type checking (`npm run build` and `npm run check` check types). Without esbuild,
 * tsc compiles each file instead. A tree is written to a temporary directory and renamed into place, so
 * servers started together never load half a tree. `npm install` compiles ahead (`prepare`).
 *
 * Before starting, the web apps under apps/web are built when their sources changed (scripts/build-web.mjs);
 * they are not part of the server's fingerprint.
 *
 * `node scripts/start.mjs --compile-only` compiles when needed and exits. An install without dev dependencies
 * has no compiler: it runs the tree compiled before the dev dependencies were pruned (`npm install`, then
 * `npm prune --omit=dev`), or else dist/ when `npm run build` left one there.
 * Set NODE_OPTIONS=--enable-source-maps for stack traces that name the TypeScript sources.
 */
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join, relative, resolve } from "node:path"
import { pathToFileURL } from "node:url"

const root = resolve(import.meta.dirname, "..")
const sourceRoots = ["core", "adapters", "apps"]
const cacheRoot = join(root, "node_modules", ".cache", "hitl-server")
const webSources = join(root, "apps", "web")
const compiler = join(root, "node_modules", "typescript", "bin", "tsc")
const compiledEntry = join("apps", "server", "main.js")
const bundledEntry = "main.mjs"
/** Written last into a finished tree. */
const completeMarker = ".complete"
const keptTrees = 3

const sourceFiles = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((item) => {
    const path = join(dir, item.name)
    // apps/web holds the browser apps, built apart (scripts/build-web.mjs): editing them never recompiles the server.
    if (item.isDirectory()) return item.name === "node_modules" || path === webSources ? [] : sourceFiles(path)
    return item.name.endsWith(".ts") && !item.name.endsWith(".d.ts") ? [path] : []
  })

const fingerprint = () => {
  const hash = createHash("sha256")
  // The bundle holds the dependencies too: the lock file says which (and which compiler) were installed.
  // (Not node_modules/.package-lock.json: pruning the dev dependencies after compiling must keep the bundle.)
  const files = [
    "tsconfig.json",
    "tsconfig.build.json",
    "package.json",
    ...(existsSync(join(root, "package-lock.json")) ? ["package-lock.json"] : []),
    ...sourceRoots.flatMap((dir) => (existsSync(join(root, dir)) ? sourceFiles(join(root, dir)) : []))
  ]
  for (const file of files.map((path) => relative(root, resolve(root, path))).sort()) {
    hash.update(`\0${file}\0`)
    hash.update(readFileSync(join(root, file)))
  }
  return hash.digest("hex").slice(0, 20)
}

/** Keeps the newest trees (a server started a moment ago may still be loading one) and drops the rest. */
const prune = (keep) => {
  const trees = readdirSync(cacheRoot)
    .map((name) => ({ name, modified: statSync(join(cacheRoot, name)).mtimeMs }))
    .sort((a, b) => b.modified - a.modified)
  const now = Date.now()
  for (const [index, tree] of trees.entries()) {
    const unfinished = tree.name.includes(".tmp-")
    const old = unfinished ? now - tree.modified > 10 * 60_000 : index >= keptTrees
    if (tree.name !== keep && old) rmSync(join(cacheRoot, tree.name), { recursive: true, force: true })
  }
}

/** Bundles the server and its dependencies into one module: one file loads several times faster than hundreds. */
const bundle = async (esbuild, temporary) => {
  await esbuild.build({
    entryPoints: [join(root, "apps", "server", "main.ts")],
    outfile: join(temporary, bundledEntry),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: true,
    logLevel: "warning",
    // PGlite finds its WebAssembly and data files next to its own modules: it stays in node_modules.
    external: ["@electric-sql/pglite", "@electric-sql/pglite-socket"],
    // Bundled CommonJS dependencies call `require`, which an ES module does not have.
    banner: {
      js: "import { createRequire as __hitlRequire } from 'node:module'; const require = __hitlRequire(import.meta.url);"
    }
  })
  return bundledEntry
}

/** Without esbuild: each source file compiled to JavaScript by tsc (no type check, no declarations). */
const transpile = (temporary) => {
  const result = spawnSync(
    process.execPath,
    [compiler, "-p", "tsconfig.build.json", "--noCheck", "--declaration", "false", "--outDir", temporary],
    { cwd: root, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" }
  )
  if (result.status !== 0) {
    process.stderr.write(`${result.stdout ?? ""}${result.stderr ?? ""}`)
    throw new Error("the server's sources did not compile (see above)")
  }
  return compiledEntry
}

const compile = async (target, esbuild) => {
  process.stderr.write("Compiling the server (its sources or dependencies changed since the last start) ...\n")
  mkdirSync(cacheRoot, { recursive: true })
  const temporary = `${target}.tmp-${process.pid}`
  rmSync(temporary, { recursive: true, force: true })
  try {
    const entry = esbuild !== undefined ? await bundle(esbuild, temporary) : transpile(temporary)
    if (!existsSync(join(temporary, entry))) throw new Error(`the compiled server has no ${entry}`)
    writeFileSync(join(temporary, completeMarker), JSON.stringify({ entry }))
  } catch (error) {
    rmSync(temporary, { recursive: true, force: true })
    throw error
  }
  try {
    renameSync(temporary, target)
  } catch (error) {
    // Another start compiled the same sources first: theirs is as good as ours.
    rmSync(temporary, { recursive: true, force: true })
    if (!existsSync(join(target, completeMarker))) throw error
  }
  prune(target.slice(cacheRoot.length + 1))
}

const loadEsbuild = async () => {
  try {
    return await import(pathToFileURL(createRequire(join(root, "package.json")).resolve("esbuild")).href)
  } catch {
    return undefined
  }
}

const finished = (target) => {
  try {
    return join(target, JSON.parse(readFileSync(join(target, completeMarker), "utf8")).entry)
  } catch {
    return undefined
  }
}

/** The compiled server's entry point for the current sources and dependencies, compiling them when needed. */
const serverEntry = async () => {
  const target = join(cacheRoot, fingerprint())
  const ready = finished(target)
  if (ready !== undefined) return ready
  const esbuild = await loadEsbuild()
  if (esbuild !== undefined || existsSync(compiler)) {
    await compile(target, esbuild)
    return finished(target)
  }
  const built = join(root, "dist", compiledEntry)
  if (existsSync(built)) {
    process.stderr.write("No compiler is installed: running the build in dist/ (npm run build).\n")
    return built
  }
  throw new Error(
    "the server is not compiled and no compiler is installed: run `npm install` with the dev dependencies " +
      "once, or `npm run build` where they are"
  )
}

const compileOnly = process.argv.includes("--compile-only")
let main
try {
  main = await serverEntry()
  // The web apps the services serve, built when their sources changed (not by `prepare`, which builds them itself).
  if (!compileOnly) {
    const { buildWeb } = await import("./build-web.mjs")
    await buildWeb({ ifAvailable: true }).catch((error) =>
      process.stderr.write(`npm start: the web apps did not build: ${error instanceof Error ? error.message : error}\n`)
    )
  }
} catch (error) {
  process.stderr.write(`npm start: ${error instanceof Error ? error.message : String(error)}\n`)
  // An install without dev dependencies has nothing to compile with; that is not a failed install.
  process.exit(compileOnly ? 0 : 1)
}
if (!compileOnly) await import(pathToFileURL(main).href)
