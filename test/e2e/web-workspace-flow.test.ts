import { readFileSync } from "node:fs"
import { join } from "node:path"
import type { Browser, Locator, Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { contentSecurityPolicy } from "../../adapters/http/StaticApp.ts"
import {
  launchBrowser,
  phoneViewport,
  screenshotDirectory,
  seriousViolations,
  watchCsp,
  watchPageErrors
} from "../support/Chromium.ts"
import { signInByEmailedLink } from "../support/EmailSignIn.ts"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"
import { startSmtpServer, type SmtpTestServer } from "../support/SmtpServer.ts"
import { mintToken } from "../support/Tokens.ts"

// What the test reads in the page, as far as it reads it (tests are checked without the DOM's types).
declare const getComputedStyle: (element: unknown) => { readonly backgroundColor: string }
interface Canvas {
  readonly width: number
  readonly height: number
  readonly getContext: (kind: "2d") => {
    readonly getImageData: (x: number, y: number, w: number, h: number) => { readonly data: ArrayLike<number> }
  }
}

const adminKey = "hub-admin-key-for-the-flow-test"
const ada = "ada@flow.test"

let server: RunningServer
let smtp: SmtpTestServer
let browser: Browser
let dataDir: string

beforeAll(async () => {
  smtp = await startSmtpServer()
  dataDir = tempDataDir()
  server = await startServer(
    {
      DATA_DIR: dataDir,
      HUB_ADMIN_KEY: adminKey,
      SMTP_URL: smtp.url,
      SMTP_FROM: "Workspace <hub@flow.test>",
      HUB_WORKER_POLL_MS: "100",
      DECISIONS_WORKER_POLL_MS: "100"
    },
    // The machine may be busy: the embedded database's first start is slow then.
    { readyWithinMillis: 240_000 }
  )
  browser = await launchBrowser()
}, 300_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop("SIGKILL")
  await smtp?.close()
})

const call = async (
  port: number,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {}
) => {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, json: text.length > 0 ? JSON.parse(text) : undefined }
}

const until = async <A>(what: string, attempt: () => Promise<A | undefined>, ms = 60_000): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await attempt()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/**
 * Seeds an organisation whose owner is Ada, with the decisions service installed: a role `ops` she holds, a
 * template `refund` on it, two decisions raised from the template and two created directly, one of each
 * chosen by Ada, and one that expires a second after it is made. Answers the ids of the two still waiting.
 */
const seed = async () => {
  const hub = server.ports.hub
  const admin = (method: string, path: string, body?: unknown) =>
    call(hub, method, path, body, { authorization: `Bearer ${adminKey}` })
  await until("the first-party services to go live", async () => {
    const answer = await admin("GET", "/api/v1/admin/services")
    const live = (answer.json?.data?.services ?? []).filter((s: { status: string }) => s.status === "live")
    return live.length === 2 ? true : undefined
  })
  const org = await admin("POST", "/api/v1/admin/orgs", { name: "Flow", tier: "monthly" })
  assert.strictEqual(org.status, 201, JSON.stringify(org.json))
  const orgId = org.json.data.org.id as string
  assert.strictEqual((await admin("POST", "/api/v1/admin/users", { email: ada, name: "Ada" })).status, 201)
  assert.strictEqual(
    (await admin("POST", `/api/v1/admin/orgs/${orgId}/members`, { email: ada, role: "OWNER" })).status,
    201
  )
  const install = await admin("PUT", `/api/v1/admin/orgs/${orgId}/installations/decisions`, {
    consents: { companyId: true, accessClaims: true, embed: false }
  })
  assert.isBelow(install.status, 300, JSON.stringify(install.json))

  const secrets = JSON.parse(readFileSync(join(dataDir, "dev-secrets.json"), "utf8")) as Record<string, string>
  const asAda = async (method: string, path: string, body?: unknown) =>
    call(server.ports.decisions, method, path, body, {
      "x-decisions-api-key": secrets["DECISIONS_API_KEY"]!,
      "x-workspace-token": await mintToken({
        key: secrets["DECISIONS_EMBED_KEY"]!,
        issuer: "platform-hub",
        audience: "decisions",
        email: ada,
        companyId: orgId,
        orgRole: "OWNER"
      })
    })
  assert.strictEqual((await asAda("POST", "/api/v1/workspace/roles", { slug: "ops", name: "Ops" })).status, 201)
  assert.isBelow((await asAda("POST", "/api/v1/workspace/roles/ops/assignments", { memberEmail: ada })).status, 300)
  const template = await asAda("POST", "/api/v1/workspace/templates", {
    slug: "refund",
    name: "Refund",
    roleSlug: "ops",
    titleTemplate: "Refund order {{order}}?",
    options: [{ label: "Refund" }, { label: "Keep" }]
  })
  assert.strictEqual(template.status, 201, JSON.stringify(template.json))
  const key = (await asAda("POST", "/api/v1/workspace/keys", { name: "agent" })).json.data.plaintext as string

  const post = async (path: string, body: unknown) => {
    const answer = await call(server.ports.decisions, "POST", path, body, {
      authorization: `Bearer ${key}`,
      "idempotency-key": crypto.randomUUID()
    })
    assert.strictEqual(answer.status, 201, JSON.stringify(answer.json))
    return answer.json.data.decision as { id: string; options: Array<{ id: string }> }
  }
  const direct = (title: string, extra: object = {}) =>
    post("/api/v1/decisions", { title, roleSlug: "ops", options: [{ label: "Yes" }, { label: "No" }], ...extra })
  const raised = (order: string) => post("/api/v1/templates/refund/raise", { params: { order } })
  const chosenRaised = await raised("1")
  const chosenDirect = await direct("Ship the release?")
  const waitingRaised = await raised("2")
  const waitingDirect = await direct("Rename the project?")
  await direct("Order more chairs?", { expiresAt: new Date(Date.now() + 1000).toISOString() })
  for (const decision of [chosenRaised, chosenDirect]) {
    const chosen = await asAda("POST", `/api/v1/workspace/decisions/${decision.id}/choose`, {
      optionId: decision.options[0]!.id
    })
    assert.strictEqual(chosen.status, 200, JSON.stringify(chosen.json))
  }
  await new Promise((r) => setTimeout(r, 1200))
  return [waitingRaised.id, waitingDirect.id]
}

/** The series' colours as the legend shows them, e.g. `rgb(29, 78, 216)`, by series label. */
const legendColours = async (figure: Locator) =>
  Object.fromEntries(
    await figure
      .locator(".chart-legend li")
      .evaluateAll((items) =>
        items.map((item) => [
          item.textContent ?? "",
          getComputedStyle(item.querySelector(".chart-swatch")!).backgroundColor
        ])
      )
  ) as Record<string, string>

/**
 * Where a colour was drawn on a figure's canvas: how many pixels have it (within a small tolerance), and the
 * highest of them as a share of the canvas's height from the bottom (1 is the top, 0 the bottom).
 */
const drawn = (figure: Locator, colour: string) =>
  figure
    .locator("canvas")
    .first()
    .evaluate((canvas: Canvas, rgb: string) => {
      const [r, g, b] = (rgb.match(/\d+/g) ?? []).map(Number)
      const { width, height } = canvas
      const data = canvas.getContext("2d")!.getImageData(0, 0, width, height).data
      let pixels = 0
      let top = height
      for (let at = 0; at < data.length; at += 4) {
        if (Math.abs(data[at]! - r!) <= 6 && Math.abs(data[at + 1]! - g!) <= 6 && Math.abs(data[at + 2]! - b!) <= 6) {
          pixels += 1
          top = Math.min(top, Math.floor(at / 4 / width))
        }
      }
      return { pixels, height: (height - top) / height }
    }, colour)

/** A chart's table of numbers: its header row and its rows as text. */
const numbers = async (figure: Locator) => {
  await figure.getByText("The numbers").click()
  const rows = await figure
    .locator("table tr")
    .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("th, td")].map((cell) => cell.textContent ?? "")))
  return { header: rows[0]!, rows: rows.slice(1) }
}

const checkPage = async (page: Page, screenshot?: string) => {
  assert.deepStrictEqual(await seriousViolations(page), [], `accessibility of ${page.url()}`)
  if (screenshot !== undefined)
    await page.screenshot({ path: join(screenshotDirectory(), `${screenshot}.png`), fullPage: true })
}

describe("the flow page in Chromium (the bundled server, seeded decisions)", () => {
  it("draws the flow's charts from the organisation's decisions, with their numbers as tables", async () => {
    const waiting = await seed()
    const hub = `http://127.0.0.1:${server.ports.hub}`
    const session = await signInByEmailedLink({ hubUrl: hub, smtp, email: ada })
    const context = await browser.newContext({ viewport: phoneViewport })
    await context.addCookies([{ name: "hub_session", value: session, url: hub }])
    const page = await context.newPage()
    const csp = watchCsp(page)
    const errors = watchPageErrors(page)

    const answer = await page.goto(`${hub}/apps/decisions/flow`)
    assert.strictEqual(answer?.headers()["content-security-policy"], contentSecurityPolicy)
    await page.getByRole("heading", { name: "Flow", level: 1 }).waitFor()
    const figures = page.locator("figure.chart")
    await until("the three charts to be drawn", async () =>
      (await page.locator(".chart-canvas[data-drawn=true] canvas").count()) === 3 ? true : undefined
    )
    assert.deepStrictEqual(await figures.locator("figcaption").allTextContents(), [
      "Decisions per day (decisions)",
      "Time to decide by role (seconds)",
      "Time to decide by template (seconds)"
    ])

    await checkPage(page, "workspace-flow")

    // Per day: five created today, the highest point of the chart; two resolved, one expired, none escalated.
    const perDay = figures.nth(0)
    const colours = await legendColours(perDay)
    assert.deepStrictEqual(Object.keys(colours), ["Created", "Resolved", "Expired", "Escalated"])
    const created = await drawn(perDay, colours["Created"]!)
    const resolved = await drawn(perDay, colours["Resolved"]!)
    assert.isAbove(created.pixels, 20)
    assert.isAbove(resolved.pixels, 20)
    assert.isAbove(created.height, resolved.height, "five created reach higher than two resolved")
    const days = await numbers(perDay)
    assert.deepStrictEqual(days.header, ["Day (UTC)", "Created", "Resolved", "Expired", "Escalated"])
    assert.strictEqual(days.rows.length, 30)
    const totals = [1, 2, 3, 4].map((column) => days.rows.reduce((sum, row) => sum + Number(row[column]), 0))
    assert.deepStrictEqual(totals, [5, 2, 1, 0])

    // Time to decide: one bar per role and per template, the median in front of the 90th percentile.
    for (const [n, label] of [
      [1, "ops"],
      [2, "refund"]
    ] as const) {
      const figure = figures.nth(n)
      const bars = await legendColours(figure)
      assert.isAbove((await drawn(figure, bars["Median"]!)).pixels, 50)
      const table = await numbers(figure)
      assert.deepStrictEqual(table.header.slice(1), ["Median", "90th percentile"])
      assert.deepStrictEqual(
        table.rows.map((row) => row[0]),
        [label]
      )
    }

    // The oldest waiting decisions link to their pages.
    const links = await page
      .locator("table a[href^='/apps/decisions/decision-']")
      .evaluateAll((as) => as.map((a) => a.getAttribute("href")))
    assert.deepStrictEqual(
      links,
      waiting.map((id) => `/apps/decisions/decision-${id}`)
    )
    // With every table open, the page still fits a phone's width.
    assert.isAtMost((await page.evaluate("document.documentElement.scrollWidth")) as number, phoneViewport.width)
    await checkPage(page)

    // Another window: the last 7 days.
    await page.getByRole("link", { name: "Last 7 days" }).click()
    await page.waitForURL(`${hub}/apps/decisions/flow-7`)
    await page.getByText(/^The last 7 days, /).waitFor()
    await until("the week's chart", async () =>
      (await page.locator(".chart-canvas[data-drawn=true] canvas").count()) === 3 ? true : undefined
    )
    assert.strictEqual((await numbers(figures.nth(0))).rows.length, 7)
    await checkPage(page)

    assert.deepStrictEqual(csp, [], "CSP reports in the console")
    assert.deepStrictEqual(errors, [], "errors thrown in the page")
    await context.close()
  }, 180_000)
})
