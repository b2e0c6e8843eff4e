import type { Browser, Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { launchBrowser, seriousViolations, watchPageErrors } from "../support/Chromium.ts"
import { runSeed, startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"
import { until } from "../support/Until.ts"

/**
 * The first hour, as the README tells it, in one walk: `npm start` on the embedded database, `npm run seed`
 * (which, with the server holding the data, says to stop it, seed and start again: done as said), signing in
 * as the demo's owner with the link the server prints, the agent's decision created with the call the seed
 * prints, answered in the workspace, and a task triaged in the task inbox's app reached from the workspace.
 * Walked twice in Chromium: once typing `localhost`, once `127.0.0.1`. Nothing is read off a log by hand
 * that the README does not point at, and no page on the way is a raw JSON answer.
 */

const alice = "alice@demo.example.com"

let browser: Browser
const servers: Array<RunningServer> = []

beforeAll(async () => {
  browser = await launchBrowser()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await Promise.all(servers.map((server) => server.stop("SIGKILL")))
})

/** `npm start`, as the README says: the compiled bundle, the embedded database under DATA_DIR. */
const npmStart = async (env: Record<string, string>) => {
  const server = await startServer(env, { compiled: true, readyWithinMillis: 120_000 })
  servers.push(server)
  return server
}

/** Waits until the server's console shows a line matching `pattern` that was not there at `from` characters. */
const printed = (server: RunningServer, pattern: RegExp, from = 0) =>
  until(`the server to print ${pattern}`, async () => pattern.exec(server.output().slice(from)) ?? undefined)

/**
 * The seed's example call, done as curl would do it: its address, its `-H` headers and its `-d` body, read
 * from the lines the seed printed.
 */
const curlPrintedBy = async (seedOutput: string) => {
  const start = seedOutput.indexOf("curl -s ")
  assert.isAtLeast(start, 0, seedOutput)
  // The command runs on over lines ending in a backslash.
  const lines: Array<string> = []
  for (const line of seedOutput.slice(start).split("\n")) {
    lines.push(line.trim().replace(/\\$/, "").trim())
    if (!line.trimEnd().endsWith("\\")) break
  }
  const command = lines.join(" ")
  const url = /^curl -s (\S+)/.exec(command)?.[1]
  assert.isDefined(url, command)
  const headers = Object.fromEntries(
    [...command.matchAll(/-H "([^":]+): ([^"]*)"/g)].map((match) => [match[1]!.toLowerCase(), match[2]!])
  )
  const body = /-d '([^']*)'/.exec(command)?.[1]
  assert.isDefined(body, command)
  const response = await fetch(url!, { method: "POST", headers, body: body! })
  return {
    url: url!,
    headers,
    body: JSON.parse(body!) as { title: string; options: Array<{ label: string }> },
    status: response.status,
    json: (await response.json()) as any
  }
}

/**
 * Records every page the browser showed as a whole document: none may be a raw JSON answer (an error
 * envelope where a person expected a page).
 */
const watchRawJson = (page: Page) => {
  const raw: Array<string> = []
  page.on("response", (response) => {
    const request = response.request()
    const redirect = response.status() >= 300 && response.status() < 400
    if (request.isNavigationRequest() && request.frame() === page.mainFrame() && !redirect) {
      const type = response.headers()["content-type"] ?? ""
      if (!type.startsWith("text/html")) raw.push(`${response.status()} ${type} ${response.url()}`)
    }
  })
  return raw
}

const accessible = async (page: Page) =>
  assert.deepStrictEqual(await seriousViolations(page), [], `accessibility of ${page.url()}`)

const walk = async (host: "localhost" | "127.0.0.1") => {
  // npm start, on a fresh clone: the embedded database under ./data (here a new directory), no mail server.
  const dataDir = tempDataDir()
  const first = await npmStart({ DATA_DIR: dataDir })
  const ports = first.ports
  const hub = `http://127.0.0.1:${ports.hub}`
  const tasks = `http://127.0.0.1:${ports.tasks}`
  const banner = await printed(first, /^ready: open (\S+)/m)
  assert.strictEqual(banner[1], `${hub}/`)
  const settings = {
    DATA_DIR: dataDir,
    HUB_PORT: String(ports.hub),
    DECISIONS_PORT: String(ports.decisions),
    TASKS_PORT: String(ports.tasks)
  }

  // npm run seed, with the server running: the embedded database is the server's, and the seed says what to do.
  const refused = await runSeed(settings)
  assert.strictEqual(refused.code, 1, refused.output)
  assert.include(refused.output, "stop the server (Ctrl-C where it runs), run npm run seed again")
  assert.notInclude(refused.output, "    at ")
  // Done as said: Ctrl-C, seed, start again.
  assert.strictEqual(await first.stop("SIGINT"), 0, first.output())
  const seeded = await runSeed(settings)
  assert.strictEqual(seeded.code, 0, seeded.output)
  // The server registered the services at its first start, so the demo organization has them installed.
  assert.notInclude(seeded.output, "Not installed yet", seeded.output)
  assert.include(
    seeded.output,
    `Next: start the server (npm start; again, if you stopped it to seed), then open ${hub}/`
  )
  assert.include(seeded.output, `sign in as ${alice}`)
  const aliceTaskKey = new RegExp(`${alice.replaceAll(".", "\\.")}\\s+(\\S+)`).exec(seeded.output)?.[1]
  assert.isDefined(aliceTaskKey, seeded.output)
  const server = await npmStart(settings)
  await printed(server, /^ready: open /m)

  // The agent's developer makes the call the seed printed: a decision for the demo's role.
  const created = await curlPrintedBy(seeded.output)
  assert.strictEqual(created.status, 201, JSON.stringify(created.json))
  const decision = created.json.data.decision as { id: string; url: string; status: string }
  assert.strictEqual(decision.status, "pending")
  assert.strictEqual(decision.url, `${hub}/apps/decisions/decision-${decision.id}`)

  const context = await browser.newContext()
  const page = await context.newPage()
  const rawJson = watchRawJson(page)
  const errors = watchPageErrors(page)
  try {
    // The newcomer opens the workspace at the address they typed: sent to the hub's own address first.
    await page.goto(`http://${host}:${ports.hub}/`)
    assert.strictEqual(new URL(page.url()).origin, hub)
    await page.getByRole("heading", { name: "Sign in to your workspace" }).waitFor()
    await accessible(page)
    await page.getByLabel("Email address").fill(alice)
    const before = server.output().length
    await page.getByRole("button", { name: "Email me a sign-in link" }).click()
    await page.getByRole("heading", { name: "Check your email" }).waitFor()
    // The link the server prints in its console, on a line of its own.
    const link = await printed(server, /^\s*(http\S+\/auth\/email\/callback\?token=\S+)\s*$/m, before)
    await page.goto(link[1]!)
    await page.getByRole("heading", { name: "Welcome, Alice" }).waitFor()
    assert.strictEqual(page.url(), `${hub}/`)

    // The decision the agent asked for reaches her feed; she opens it and answers it.
    const item = page.getByRole("link", { name: created.body.title })
    await until(
      "the decision in the workspace's feed",
      async () => {
        await page.reload()
        await page.getByRole("heading", { name: "Welcome, Alice" }).waitFor()
        await page.getByRole("heading", { name: /^Notifications/ }).waitFor()
        return (await item.count()) > 0 ? true : undefined
      },
      120_000
    )
    await accessible(page)
    await item.first().click()
    await page.waitForURL(decision.url)
    await page.getByRole("heading", { level: 1, name: created.body.title }).waitFor()
    await accessible(page)
    const chosen = created.body.options[0]!.label
    await page.getByRole("button", { name: chosen, exact: true }).click()
    await page.getByRole("alertdialog").getByRole("button", { name: chosen, exact: true }).click()
    await page.getByText(new RegExp(`^Chosen: ${chosen}`)).waitFor()
    // The agent reads its answer with the same key.
    const answered = await fetch(created.url + `/${decision.id}`, {
      headers: { authorization: created.headers["authorization"]! }
    }).then((r) => r.json() as Promise<any>)
    assert.strictEqual(answered.data.decision.status, "resolved", JSON.stringify(answered))

    // From the workspace to the task inbox, by its entry in the workspace's apps.
    await page.getByRole("link", { name: "Home" }).click()
    await page.getByRole("heading", { name: "Welcome, Alice" }).waitFor()
    const entry = page.getByRole("navigation", { name: "Apps" }).getByRole("link", { name: "Task inbox" })
    await entry.click()
    // Signed in at the hub already: one click on Sign in, nothing to type.
    await page.getByRole("link", { name: "Sign in" }).click()
    const inbox = page.getByRole("list", { name: "Untriaged tasks" })
    await inbox.waitFor()
    assert.strictEqual(page.url(), `${tasks}/`)
    await accessible(page)

    // Triage: the first task of her inbox, accepted into a project.
    const open = inbox.getByRole("link").first()
    const title = (await open.textContent())!
    await open.click()
    await page.getByRole("heading", { level: 1, name: title }).waitFor()
    const taskId = decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1)!)
    await page.getByRole("button", { name: "Accept", exact: true }).click()
    await page.getByRole("radio").first().check()
    await page.getByRole("button", { name: "Accept task" }).click()
    await page.getByText("Accepted: the task is on your board.").waitFor()
    await accessible(page)
    const task = await fetch(`${tasks}/api/tasks/${encodeURIComponent(taskId)}`, {
      headers: { "x-api-key": aliceTaskKey! }
    }).then((r) => r.json() as Promise<any>)
    assert.strictEqual(task.task.triageStatus, "Accepted", JSON.stringify(task))

    // And back to the workspace from the task inbox.
    await page.getByRole("link", { name: "Workspace", exact: true }).click()
    await page.getByRole("heading", { name: "Welcome, Alice" }).waitFor()
    assert.strictEqual(page.url(), `${hub}/`)

    assert.deepStrictEqual(rawJson, [], "pages shown as raw JSON")
    assert.deepStrictEqual(errors, [], "errors thrown in the page")
  } finally {
    await context.close()
  }
}

describe("the first hour, following the README (the bundled server, Chromium)", () => {
  it(
    "from localhost: start, seed, sign in, answer the agent's decision, triage a task",
    () => walk("localhost"),
    300_000
  )
  it("from 127.0.0.1: the same walk", () => walk("127.0.0.1"), 300_000)
})
