import type { Browser, Page, Request } from "playwright-core"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { contentSecurityPolicy } from "../../adapters/http/StaticApp.ts"
import {
  launchBrowser,
  phoneViewport,
  screenshotDirectory,
  seriousViolations,
  watchCsp,
  watchPageErrors
} from "./Chromium.ts"
import type { RunningServer } from "./ServerProcess.ts"
import type { SmtpTestServer } from "./SmtpServer.ts"
import { startSeededServer } from "./WebTasksServer.ts"
import { until } from "./Until.ts"

/**
 * The task inbox's web app in Chromium against the bundled server (embedded database, loaded with the demo
 * data, and an SMTP server inside the test): signing in at the hub by an emailed link, triaging a task from its
 * link, accepting a proposal, and an API key generated in the settings used against the API. Every page passes
 * axe-core without a serious or critical violation and is read at 375 px without sideways scrolling. The same
 * clicks run on each record store of the task inbox (test/e2e/web-tasks*.test.ts).
 */
export interface WebTasksWalkThrough {
  /** Names the variant in the suite's title. */
  readonly name: string
  /** Settings for the seed and the server on top of the test's own (the record store's), read before the seed. */
  readonly env?: (() => Promise<Record<string, string>>) | undefined
  /** Whether the pages named are photographed (one variant does it). */
  readonly screenshots?: boolean | undefined
  /** How long the seed and the start may take, and each step. Default 300 s and 90 s. */
  readonly setUpMillis?: number | undefined
  readonly stepMillis?: number | undefined
}

const alice = "alice@demo.example.com"
const adminKey = "hub-admin-key-for-the-task-inbox-test"

export const webTasksWalkThrough = (options: WebTasksWalkThrough) => {
  let smtp: SmtpTestServer
  let server: RunningServer
  let browser: Browser
  let page: Page
  let tasks: string
  let hub: string
  let aliceKey: string
  let demoOrgId: string
  let cspViolations: Array<string>
  let pageErrors: Array<string>
  /** Every change the app sent to the API, in order: method, path and its Idempotency-Key. */
  const changes: Array<{ readonly method: string; readonly path: string; readonly key: string | undefined }> = []

  /** The task inbox's API as Alice's script calls it, with an API key. */
  const asKey = async (key: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${tasks}${path}`, {
      method,
      headers: { "x-api-key": key, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {})
    })
    const text = await response.text()
    return { status: response.status, json: text.length > 0 ? JSON.parse(text) : undefined }
  }
  const asAlice = (method: string, path: string, body?: unknown) => asKey(aliceKey, method, path, body)

  beforeAll(async () => {
    ;({ server, smtp, tasks, hub, aliceKey, demoOrgId } = await startSeededServer({
      adminKey,
      env: (await options.env?.()) ?? {}
    }))
    browser = await launchBrowser()
    page = await browser.newPage({ viewport: phoneViewport })
    cspViolations = watchCsp(page)
    pageErrors = watchPageErrors(page)
    page.on("request", (request: Request) => {
      const url = new URL(request.url())
      if (request.method() !== "GET" && url.pathname.startsWith("/api/")) {
        changes.push({ method: request.method(), path: url.pathname, key: request.headers()["idempotency-key"] })
      }
    })
  }, options.setUpMillis ?? 300_000)

  afterAll(async () => {
    await browser?.close()
    await server?.stop("SIGKILL")
    await smtp?.close()
  })

  /** Accessible, readable at 375 px (nothing wider than the screen), and photographed when named. */
  const checkPage = async (screenshot?: string) => {
    assert.deepStrictEqual(await seriousViolations(page), [], `accessibility of ${page.url()}`)
    const width = (await page.evaluate("document.documentElement.scrollWidth")) as number
    assert.isAtMost(width, 375, `${page.url()} scrolls sideways`)
    if (screenshot !== undefined && options.screenshots === true) {
      await page.screenshot({ path: join(screenshotDirectory(), `tasks-${screenshot}.png`), fullPage: true })
    }
  }

  const heading = (name: string) => page.getByRole("heading", { level: 1, name })
  /** A link of the app's navigation. */
  const nav = (name: string) =>
    page.getByRole("navigation", { name: "Task inbox" }).getByRole("link", { name, exact: true })

  const title = `the task inbox's web app in Chromium (the bundled server, signed in at the hub, ${options.name})`
  describe(title, { timeout: options.stepMillis ?? 90_000 }, () => {
    it("offers a sign-in button when signed out; the hub signs Alice in by an emailed link and sends her back", async () => {
      const answer = await page.goto(`${tasks}/board`)
      assert.strictEqual(answer!.headers()["content-security-policy"], contentSecurityPolicy)
      const signIn = page.getByRole("link", { name: "Sign in" })
      await signIn.waitFor()
      await checkPage("sign-in")
      await signIn.click()
      // At the hub: its sign-in page, by email.
      await page.getByLabel("Email address").fill(alice)
      const before = smtp.to(alice).length
      await page.getByRole("button", { name: "Email me a sign-in link" }).click()
      await page.getByRole("heading", { name: "Check your email" }).waitFor()
      assert.strictEqual(new URL(page.url()).origin, hub)
      const mail = (await smtp.waitFor(alice, before + 1)).at(-1)!
      const link = /https?:\/\/\S+\/auth\/email\/callback\?token=[^\s"<>]+/.exec(mail.text)?.[0]
      assert.isDefined(link, mail.text)
      await page.goto(link!)
      // Signed in, the hub goes on by itself to where the sign-in was heading: its OpenID interaction for the
      // task inbox, and from there back to the task inbox.
      // Back in the task inbox, on the page she had asked for.
      await heading("Board").waitFor()
      assert.strictEqual(page.url(), `${tasks}/board`)
      await nav("Inbox").click()
      await page.getByRole("list", { name: "Untriaged tasks" }).waitFor()
      assert.strictEqual(new URL(page.url()).pathname, "/")
      await checkPage("inbox")
    })

    it("is reached from the workspace's navigation and its card, and leads back to the workspace", async () => {
      // The demo organization installs the task inbox (the seed ran before the server had registered it).
      const admin = { authorization: `Bearer ${adminKey}`, "content-type": "application/json" }
      await until("the task inbox to go live", async () => {
        const answer = await fetch(`${hub}/api/v1/admin/services/tasks`, { headers: admin })
        return answer.ok &&
          ((await answer.json()) as { data: { service: { status: string } } }).data.service.status === "live"
          ? true
          : undefined
      })
      const installed = await fetch(`${hub}/api/v1/admin/orgs/${demoOrgId}/installations/tasks`, {
        method: "PUT",
        headers: admin,
        body: JSON.stringify({ consents: { companyId: true, accessClaims: false, embed: false } })
      })
      assert.isBelow(installed.status, 300, await installed.text())

      // Signed in at the hub above: the workspace lists the task inbox, its entries leading to the app itself.
      await page.goto(`${hub}/`)
      await page.getByRole("heading", { name: "Welcome, Alice" }).waitFor()
      const entry = page.getByRole("navigation", { name: "Apps" }).getByRole("link", { name: "Task inbox" })
      assert.strictEqual(await entry.getAttribute("href"), `${tasks}/`)
      const card = page.getByRole("heading", { level: 3, name: "Task inbox" }).getByRole("link")
      assert.strictEqual(await card.getAttribute("href"), `${tasks}/`)
      // The app's address in the workspace says where the app is rather than "No such app.".
      await page.goto(`${hub}/apps/tasks`)
      await heading("Task inbox").waitFor()
      assert.strictEqual(await page.getByText("No such app.").count(), 0)
      assert.deepStrictEqual(await seriousViolations(page), [], `accessibility of ${page.url()}`)
      await page.getByRole("link", { name: "Open Task inbox" }).click()
      await page.getByRole("list", { name: "Untriaged tasks" }).waitFor()
      assert.strictEqual(page.url(), `${tasks}/`)
      // The task inbox's header leads back to the workspace.
      await page.getByRole("link", { name: "Workspace", exact: true }).click()
      await page.getByRole("heading", { name: "Welcome, Alice" }).waitFor()
      assert.strictEqual(page.url(), `${hub}/`)

      // Someone signed in at the hub only: from the workspace's entry, one click on Sign in and no typing.
      const hubOnly = await browser.newContext({ viewport: phoneViewport })
      await hubOnly.addCookies((await page.context().cookies(hub)).filter((c) => c.name === "hub_session"))
      const fresh = await hubOnly.newPage()
      await fresh.goto(`${hub}/`)
      await fresh.getByRole("navigation", { name: "Apps" }).getByRole("link", { name: "Task inbox" }).click()
      await fresh.getByRole("link", { name: "Sign in" }).click()
      await fresh.getByRole("list", { name: "Untriaged tasks" }).waitFor()
      assert.strictEqual(fresh.url(), `${tasks}/`)
      await hubOnly.close()
    })

    it("opens a task from its short link and accepts it into a project with the Accept button", async () => {
      const created = await asAlice("POST", "/api/tasks", { title: "Check the relaunch analytics", priority: "high" })
      assert.strictEqual(created.status, 201)
      const task = created.json.task
      assert.strictEqual(task.linkToTaskInterface, `${tasks}/tasks/${task.id}`)
      const short = await asAlice("POST", `/api/tasks/${task.id}/shortlink`)
      await page.goto(short.json.shortUrl)
      await heading("Check the relaunch analytics").waitFor()
      assert.strictEqual(page.url(), task.linkToTaskInterface)
      for (const name of ["Accept", "Reject", "Needs info", "Archive", "Delegate"]) {
        await page.getByRole("button", { name, exact: true }).waitFor()
      }
      await page.getByRole("button", { name: "Accept", exact: true }).click()
      await page.getByLabel("Find a project").fill("relaunch")
      const project = page.getByRole("radio").first()
      await project.check()
      await checkPage("task-accept")
      await page.getByRole("button", { name: "Accept task" }).click()
      await page.getByText("Accepted: the task is on your board.").waitFor()
      // Accepted, it is no longer offered Accept, Reject or Needs info: only what still applies.
      const triage = page.getByRole("region", { name: "Triage" })
      await triage.getByRole("button", { name: "Delegate", exact: true }).waitFor()
      assert.deepStrictEqual(await triage.getByRole("button").allTextContents(), ["Archive", "Delegate"])

      const after = (await asAlice("GET", `/api/tasks/${task.id}`)).json.task
      assert.strictEqual(after.triageStatus, "Accepted")
      assert.lengthOf(after.project, 1)
      assert.match(after.projectName, /relaunch/i)
      await checkPage("task")
    })

    it("sends a failed triage again with the same Idempotency-Key, so it is applied once", async () => {
      const task = (await asAlice("POST", "/api/tasks", { title: "Ask Acme for the logo files" })).json.task
      await page.goto(task.linkToTaskInterface)
      // By keyboard: the move's button opens its form and puts the cursor in its field.
      await page.getByRole("button", { name: "Needs info", exact: true }).focus()
      await page.keyboard.press("Enter")
      await page.waitForFunction("document.activeElement?.getAttribute('name') === 'note'")
      await page.keyboard.type("Which formats do you need?")
      // The first attempt reaches the server and is applied, but its answer never reaches the page.
      let dropped = false
      await page.route(`**/api/tasks/${task.id}/needs-info`, async (route) => {
        if (dropped) return route.continue()
        dropped = true
        await route.fetch()
        await route.abort("connectionreset")
      })
      const before = changes.length
      await page.getByRole("button", { name: "Ask for information" }).click()
      await page.getByText("The server could not be reached. Check your connection.").waitFor()
      await page.getByRole("button", { name: "Try again" }).click()
      await page.getByText("Asked for more information.").waitFor()
      // Done, the keyboard is back on the move's button.
      assert.strictEqual(await page.evaluate("document.activeElement.textContent"), "Needs info")
      const sent = changes.slice(before)
      assert.lengthOf(sent, 2)
      assert.isString(sent[0]!.key)
      assert.strictEqual(sent[1]!.key, sent[0]!.key)
      const after = (await asAlice("GET", `/api/tasks/${task.id}`)).json.task
      assert.strictEqual(after.triageStatus, "Needs More Info")
      assert.strictEqual(after.triageNotes.split("Which formats do you need?").length, 2, after.triageNotes)
    })

    it("shows the API's own words when a change is refused", async () => {
      const task = (await asAlice("POST", "/api/tasks", { title: "Hand over the audit" })).json.task
      await page.goto(task.linkToTaskInterface)
      await page.getByRole("button", { name: "Delegate", exact: true }).click()
      await page.getByLabel("Hand it to (email)").fill("nobody@nowhere.example")
      await page.getByRole("button", { name: "Delegate task" }).click()
      const alert = page.getByRole("alert")
      await alert.getByText("Validation failed").waitFor()
      assert.include(await alert.innerText(), "assignedTo")
      await checkPage()
      await page.getByLabel("Hand it to (email)").fill("bob@demo.example.com")
      await page.getByRole("button", { name: "Delegate task" }).click()
      await page.getByText("Delegated to Bob Chen.").waitFor()
    })

    it("rejects tasks chosen in the inbox together", async () => {
      const titles = ["Bulk one", "Bulk two"]
      for (const title of titles) assert.strictEqual((await asAlice("POST", "/api/tasks", { title })).status, 201)
      await nav("Inbox").click()
      await page.getByRole("list", { name: "Untriaged tasks" }).waitFor()
      for (const title of titles) await page.getByRole("checkbox", { name: `Select ${title}` }).check()
      await page.getByRole("status").filter({ hasText: "2 selected" }).waitFor()
      await page.getByRole("button", { name: "Reject selected" }).click()
      await page.getByLabel("Reason (optional)").fill("Duplicates")
      await checkPage("inbox-bulk")
      await page.getByRole("button", { name: "Reject 2" }).click()
      await page.getByText("2 tasks rejected.").waitFor()
      const inbox = (await asAlice("GET", "/api/tasks")).json.tasks as Array<{ title: string }>
      assert.isFalse(inbox.some((task) => titles.includes(task.title)))
    })

    it("accepts a proposal: the change is applied and it leaves the list", async () => {
      const open = (await asAlice("GET", "/api/proposals")).json.proposals as Array<any>
      const proposal = open.find((p) => p.proposedChangesObj.action === "create_task")
      assert.isDefined(proposal)
      await nav("Proposals").click()
      await heading("Proposals").waitFor()
      const card = page.getByRole("listitem").filter({ has: page.getByRole("heading", { name: proposal.name }) })
      await card.waitFor()
      await checkPage("proposals")
      await card.getByRole("button", { name: "Accept", exact: true }).click()
      await page.getByText(`Accepted “${proposal.name}”`).waitFor()
      const after = (await asAlice("GET", "/api/proposals")).json.proposals as Array<any>
      assert.isFalse(after.some((p) => p.id === proposal.id))
      const title = proposal.proposedChangesObj.title as string
      const board = (await asAlice("GET", "/api/tasks/search")).json.tasks as Array<{ title: string }>
      assert.isTrue(board.some((task) => task.title === title))
    })

    it("generates an API key in the settings (shown once) that works with X-API-Key, and revokes it", async () => {
      await nav("Settings").click()
      await heading("Settings").waitFor()
      await page.getByRole("heading", { name: "Notifications" }).waitFor()
      await checkPage("settings")
      await page.getByRole("link", { name: "API keys" }).click()
      await page.getByLabel("Key name").fill("browser test script")
      await page.getByRole("button", { name: "Generate key" }).click()
      const secret = await page.getByLabel("New API key").inputValue()
      assert.match(secret, /^tsk_/)
      await page.getByRole("list", { name: "Your API keys" }).getByText("browser test script").waitFor()
      await checkPage("api-keys")

      const mine = await asKey(secret, "GET", "/api/settings/api-keys")
      assert.strictEqual(mine.status, 200)
      assert.isTrue(mine.json.apiKeys.some((k: { name: string }) => k.name === "browser test script"))
      assert.strictEqual((await asKey(secret, "GET", "/api/tasks")).status, 200)

      await page.getByRole("button", { name: "Done, hide it" }).click()
      assert.strictEqual(await page.getByLabel("New API key").count(), 0)
      const row = page.getByRole("listitem").filter({ hasText: "browser test script" })
      await row.getByRole("button", { name: "Revoke" }).click()
      await row.getByRole("button", { name: "Revoke now" }).click()
      await row.waitFor({ state: "detached" })
      assert.strictEqual((await asKey(secret, "GET", "/api/tasks")).status, 401)
    })

    it("saves preferences: hiding Sent takes it out of the navigation", async () => {
      await page.getByRole("link", { name: "Preferences" }).click()
      await page.getByLabel("Show “Sent” in the navigation").uncheck()
      // Notifications are the workspace's settings, the only ones: no second email preference here, a link there.
      assert.strictEqual(await page.getByLabel("Frequency").count(), 0)
      assert.strictEqual(await page.getByLabel("Channel").count(), 0)
      const workspaceSettings = page.getByRole("link", { name: "Open your notification settings" })
      assert.strictEqual(await workspaceSettings.getAttribute("href"), `${hub}/settings`)
      await page.getByRole("button", { name: "Save preferences" }).click()
      await page.getByText("Preferences saved.").waitFor()
      await nav("Sent").waitFor({ state: "detached" })
      const settings = (await asAlice("GET", "/api/settings")).json.settings
      assert.deepStrictEqual(settings, {
        showSentNav: false,
        notifications: { channel: "email", frequency: "immediate" }
      })
      await page.getByLabel("Show “Sent” in the navigation").check()
      await page.getByRole("button", { name: "Save preferences" }).click()
      await nav("Sent").waitFor()
    })

    it("shows every list, search, projects and meetings accessibly at 375 px", async () => {
      const visit = async (
        path: string,
        title: string,
        screenshot: string | undefined,
        ready: () => Promise<unknown>
      ) => {
        await page.goto(`${tasks}${path}`)
        await heading(title).waitFor()
        await ready()
        await checkPage(screenshot)
      }
      await visit("/board", "Board", "board", () => page.getByRole("list", { name: "Your active tasks" }).waitFor())
      // Ticked on the board, a task accepted before is offered Mark done, not Accept or Reject again.
      const accepted = page.getByRole("checkbox", { name: "Select Check the relaunch analytics" })
      await accepted.check()
      const bar = page.getByRole("region", { name: "Selected tasks" })
      await bar.getByRole("button", { name: "Mark selected done" }).waitFor()
      assert.deepStrictEqual(await bar.getByRole("button").allTextContents(), ["Mark selected done"])
      await accepted.uncheck()
      await visit("/sent", "Sent", "sent", () => page.getByRole("list", { name: "Tasks you sent" }).waitFor())
      await visit("/search?clientName=acme&activeOnly=true", "Search", "search", () =>
        page.getByRole("list", { name: "Tasks found" }).waitFor()
      )
      assert.strictEqual(await page.getByLabel("Client name").inputValue(), "acme")
      await visit("/history", "History", "history", () => page.getByRole("list", { name: "Resolved tasks" }).waitFor())
      await visit("/projects", "Projects", "projects", () =>
        page.getByRole("list", { name: "Your projects" }).waitFor()
      )
      await page
        .getByRole("list", { name: "Your projects" })
        .getByRole("link", { name: "Acme Website Relaunch" })
        .click()
      await page.getByRole("heading", { level: 2, name: "Meetings" }).waitFor()
      await checkPage("project")
      await visit("/meetings?all=true", "Meetings", "meetings", () =>
        page.getByRole("list", { name: "Recent meetings" }).waitFor()
      )
      await visit("/no/such/page", "Page not found", undefined, async () => undefined)
    })

    it("sent an Idempotency-Key with every change, a fresh one per action", async () => {
      assert.isAbove(changes.length, 5)
      for (const change of changes) assert.isString(change.key, `${change.method} ${change.path}`)
      // The only repeated key is the retried needs-info above.
      const keys = changes.map((change) => change.key)
      assert.strictEqual(new Set(keys).size, keys.length - 1)
    })

    it("ran without a script error or a Content-Security-Policy refusal", () => {
      assert.deepStrictEqual(pageErrors, [])
      assert.deepStrictEqual(cspViolations, [])
    })

    it("signs out", async () => {
      await page.goto(`${tasks}/`)
      await page.getByRole("button", { name: "Sign out" }).click()
      await page.getByRole("link", { name: "Sign in" }).waitFor()
      const me = await page.evaluate(() => fetch("/auth/me").then((r) => r.status))
      assert.strictEqual(me, 401)
    })
  })
}
