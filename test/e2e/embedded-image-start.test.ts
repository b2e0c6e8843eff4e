import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "vitest"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"

const running: Array<RunningServer> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop("SIGKILL")))
})

const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]
  )

const ready = async (port: number) => {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    const status = await fetch(`http://127.0.0.1:${port}/api/v1/ready`).then(
      (response) => response.status,
      () => 0
    )
    if (status === 200) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`not ready on ${port}`)
}

/** `npm start` on a new DATA_DIR, until the three services are ready; answers the image it copied. */
const freshStart = async (dataDir: string) => {
  const server = await startServer({ DATA_DIR: dataDir, LOG_FORMAT: "json" }, { compiled: true })
  running.push(server)
  for (const port of Object.values(server.ports)) await ready(port)
  const copied = /copied from the image at ([^"\n]+)/.exec(server.output())
  assert.isNotNull(copied, server.output())
  assert.strictEqual(await server.stop("SIGTERM"), 0)
  return copied![1]!
}

describe("npm start on a new embedded database (from the image scripts/start.mjs makes)", () => {
  it("copies the image, generates the data directory's own secrets, keeps them out of the image, and the data this account's only", async () => {
    const first = join(tempDataDir(), "data")
    const second = join(tempDataDir(), "data")
    const image = await freshStart(first)
    assert.strictEqual(await freshStart(second), image)

    // Each data directory generated secrets of its own.
    const secretsOf = (dataDir: string) => {
      const kept = JSON.parse(readFileSync(join(dataDir, "dev-secrets.json"), "utf8")) as Record<string, string>
      return [...Object.values(kept), readFileSync(join(dataDir, "dev-oidc-signing-key.pem"), "utf8").trim()]
    }
    const secrets = [...secretsOf(first), ...secretsOf(second)]
    assert.isAbove(secrets.length, 20)
    assert.strictEqual(new Set(secrets).size, secrets.length)

    // No secret of either is anywhere in the image, after both servers ran (first-party services registered).
    const imageFiles = filesUnder(image)
    assert.isAbove(imageFiles.length, 100)
    for (const file of imageFiles) {
      const bytes = readFileSync(file)
      for (const secret of secrets) assert.isFalse(bytes.includes(secret), `${file} holds a secret`)
    }

    // The copy became this account's only, as a database created in place is.
    for (const dataDir of [first, second]) {
      for (const path of [dataDir, ...filesUnder(dataDir)]) {
        const mode = statSync(path).mode & 0o777
        assert.strictEqual(mode, path === dataDir ? 0o700 : 0o600, path)
      }
    }
  }, 240_000)
})
