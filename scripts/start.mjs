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
 * A bundled tree also holds the maker of the embedded database image: a new database with every migration
 * applied and nothing else, under node_modules/.cache/hitl-embedded-image/<key>, which a server starting on an
 * empty DATA_DIR copies instead of creating and migrating one (EMBEDDED_IMAGE; docs/operations.md, Start-up).
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
import { dirname, join, relative, resolve } from "node:path"
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
/** Embedded database images, one per set of migrations (apps/server/embeddedImage.ts), about 40 MB each. */
const imageRoot = join(root, "node_modules", ".cache", "hitl-embedded-image")
const imageMaker = "embedded-image.mjs"
const keptImages = 3

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

/**
 * Bundles the server and its dependencies into one module (one file loads several times faster than hundreds),
 * and beside it the maker of the embedded database image (apps/server/embeddedImage.ts). Answers the server's
 * entry and the image's key: a hash of the image maker's bundle, which holds every migration and the code
 * that applies them, and of the installed PGlite, whose version decides the database files' format.
 */
const bundle = async (esbuild, temporary) => {
  await esbuild.build({
    entryPoints: {
      [bundledEntry.replace(/\.mjs$/, "")]: join(root, "apps", "server", "main.ts"),
      [imageMaker.replace(/\.mjs$/, "")]: join(root, "apps", "server", "embeddedImage.ts")
    },
    outdir: temporary,
    outExtension: { ".js": ".mjs" },
    absWorkingDir: root,
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
  const key = createHash("sha256")
  key.update(readFileSync(join(temporary, imageMaker)))
  const pglite = join(root, "node_modules", "@electric-sql", "pglite", "package.json")
  if (existsSync(pglite)) key.update(readFileSync(pglite))
  return { entry: bundledEntry, image: key.digest("hex").slice(0, 20) }
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
  return { entry: compiledEntry }
}

const compile = async (target, esbuild) => {
  process.stderr.write("Compiling the server (its sources or dependencies changed since the last start) ...\n")
  mkdirSync(cacheRoot, { recursive: true })
  const temporary = `${target}.tmp-${process.pid}`
  rmSync(temporary, { recursive: true, force: true })
  try {
    const tree = esbuild !== undefined ? await bundle(esbuild, temporary) : transpile(temporary)
    if (!existsSync(join(temporary, tree.entry))) throw new Error(`the compiled server has no ${tree.entry}`)
    writeFileSync(join(temporary, completeMarker), JSON.stringify(tree))
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

/** A finished tree: its entry point, and the key of its embedded database image (bundled trees only). */
const finished = (target) => {
  try {
    const tree = JSON.parse(readFileSync(join(target, completeMarker), "utf8"))
    return { entry: join(target, tree.entry), image: typeof tree.image === "string" ? tree.image : undefined }
  } catch {
    return undefined
  }
}

/** The compiled server for the current sources and dependencies, compiling them when needed. */
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
    return { entry: built, image: undefined }
  }
  throw new Error(
    "the server is not compiled and no compiler is installed: run `npm install` with the dev dependencies " +
      "once, or `npm run build` where they are"
  )
}

/**
 * The embedded database image for `key`, made when missing: by `--compile-only` (so `npm install` makes it),
 * and by a start that is about to create a new embedded database anyway (DATABASE_URL unset, nothing under
 * DATA_DIR yet), which then copies it instead of migrating. A restart never waits for one. Answers its
 * directory, or undefined when there is none; a server without one creates and migrates a new database.
 */
const embeddedImage = (tree, key) => {
  const dir = join(imageRoot, key)
  if (existsSync(join(dir, "image.json"))) return dir
  const dataDir = resolve(process.env["DATA_DIR"] || "./data")
  const newDatabase = (process.env["DATABASE_URL"] ?? "") === "" && !existsSync(join(dataDir, "pglite"))
  if (!compileOnly && !newDatabase) return undefined
  process.stderr.write("Making the embedded database image (once for each version of the migrations) ...\n")
  const made = spawnSync(process.execPath, [join(tree, imageMaker), dir], { stdio: ["ignore", "ignore", "inherit"] })
  if (made.status !== 0 || !existsSync(join(dir, "image.json"))) {
    process.stderr.write("npm start: no embedded database image; a new DATA_DIR is created and migrated instead\n")
    return undefined
  }
  const images = readdirSync(imageRoot)
    .map((name) => ({ name, modified: statSync(join(imageRoot, name)).mtimeMs }))
    .sort((a, b) => b.modified - a.modified)
  for (const [index, image] of images.entries()) {
    const unfinished = image.name.includes(".tmp-")
    const old = unfinished ? Date.now() - image.modified > 10 * 60_000 : index >= keptImages
    if (image.name !== key && old) rmSync(join(imageRoot, image.name), { recursive: true, force: true })
  }
  return dir
}

const compileOnly = process.argv.includes("--compile-only")
let main
try {
  const compiled = await serverEntry()
  main = compiled.entry
  const image = compiled.image === undefined ? undefined : embeddedImage(dirname(compiled.entry), compiled.image)
  if (image !== undefined && process.env["EMBEDDED_IMAGE"] === undefined) process.env["EMBEDDED_IMAGE"] = image
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
