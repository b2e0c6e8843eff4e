/**
 * Event ingest on several compiled versions of the server at once, taking turns in bursts, so that whatever
 * else the machine is doing weighs on all alike: each version runs from its compiled tree on a Postgres
 * database of its own and gets the same data; then, round after round, each takes a burst of signed events
 * (the benchmark's plain type, a new id each) at the given concurrency, the order reversed every other round.
 * Printed per round: the server CPU time per event of each version (its process group, from /proc) and its
 * ratio to the first version's; at the end, the median of each and the median of the per-round ratios, the
 * figure to compare on a shared machine.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/ingestPaired.ts \
 *     before=<tree>/main.mjs after=<tree>/main.mjs [--rounds=12] [--burst=3000] [--conns=32]
 *
 * A compiled tree is what `node scripts/start.mjs --compile-only` leaves under
 * node_modules/.cache/hitl-server/<fingerprint>/ for the sources as they are (it keeps the three newest
 * trees): compile one version, check out the other, compile again, and name both trees' main.mjs.
 */
import autocannon from "autocannon"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { type BundledServer, freshDatabase, processGroupCpuSeconds, startBundledServer } from "./ServerProcess.ts"
import { benchServerEnv, newOperatorKeys, setUpBenchData, signedEvent } from "./Setup.ts"

const root = resolve(import.meta.dirname, "..")
const option = (name: string, fallback: string) =>
  process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback
const rounds = Number(option("rounds", "12"))
const burst = Number(option("burst", "3000"))
const conns = Number(option("conns", "32"))
const versions = process.argv
  .slice(2)
  .filter((arg) => !arg.startsWith("--"))
  .map((arg) => {
    const at = arg.indexOf("=")
    if (at < 1) throw new Error(`name each version as label=<tree>/main.mjs, not ${arg}`)
    return { label: arg.slice(0, at), entry: resolve(arg.slice(at + 1)) }
  })
if (versions.length < 2) throw new Error("name at least two compiled versions")
const databaseUrl = process.env["DATABASE_URL"]
if (databaseUrl === undefined) throw new Error("DATABASE_URL is needed")

const path = "/api/webhooks/events"

/** `amount` signed events over `conns` connections: answers how many were not 2xx. */
const fire = (origin: string, key: string, amount: number) =>
  new Promise<number>((ok, fail) => {
    autocannon(
      {
        url: origin,
        connections: conns,
        amount,
        timeout: 30,
        requests: [
          {
            method: "POST",
            path,
            setupRequest: (request) => ({ ...request, ...signedEvent(path, key) })
          }
        ]
      },
      (error, result) => (error ? fail(error) : ok(result.non2xx + result.errors))
    )
  })

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms))
const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

interface Side {
  readonly label: string
  readonly server: BundledServer
  readonly drop: () => Promise<void>
  readonly signingKey: string
  readonly perEvent: Array<number>
}

const main = async () => {
  const sides: Array<Side> = []
  try {
    for (const { label, entry } of versions) {
      const dir = mkdtempSync(join(tmpdir(), `ingest-paired-${label}-`))
      const database = await freshDatabase(databaseUrl, "benchpaired")
      const keys = newOperatorKeys()
      const server = await startBundledServer({
        cwd: root,
        logFile: join(dir, "server.log"),
        command: { command: process.execPath, args: [entry] },
        env: benchServerEnv({ dir, databaseUrl: database.url, keys })
      }).catch(async (error: unknown) => {
        await database.drop()
        throw error
      })
      sides.push({ label, server, drop: database.drop, signingKey: "", perEvent: [] })
      const data = await setUpBenchData(server, keys)
      sides[sides.length - 1] = { ...sides[sides.length - 1]!, signingKey: data.signingKey }
    }
    for (const side of sides) await fire(side.server.hub, side.signingKey, 2000) // warm-up
    const first = sides[0]!
    for (let round = 0; round < rounds; round++) {
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        await pause(300)
        const before = processGroupCpuSeconds(side.server.child.pid!) * 1000
        const refused = await fire(side.server.hub, side.signingKey, burst)
        await pause(300) // the inserts still in flight when the last answer left
        side.perEvent.push((processGroupCpuSeconds(side.server.child.pid!) * 1000 - before) / burst)
        if (refused > 0) process.stdout.write(`${side.label}: ${refused} answers not 2xx\n`)
      }
      const figures = sides.map((side) => `${side.label} ${side.perEvent[round]!.toFixed(3)}`).join("  ")
      const ratios = sides
        .slice(1)
        .map((side) => `  ${side.label}/${first.label} ${(side.perEvent[round]! / first.perEvent[round]!).toFixed(3)}`)
        .join("")
      process.stdout.write(`round ${round + 1}: ${figures}${ratios}\n`)
    }
    for (const side of sides) {
      process.stdout.write(`${side.label}: server CPU per event, median ${median(side.perEvent).toFixed(3)} ms\n`)
    }
    for (const side of sides.slice(1)) {
      const ratios = side.perEvent.map((ms, round) => ms / first.perEvent[round]!)
      process.stdout.write(
        `${side.label}/${first.label}: median of the per-round ratios ${median(ratios).toFixed(3)}\n`
      )
    }
  } finally {
    for (const side of sides) {
      await side.server.stop()
      await side.drop()
    }
  }
}

await main()
