import { afterEach, assert, describe, it } from "vitest"
import { acmeWithDecisions, platform, until, type Platform } from "../support/DecisionsPlatform.ts"
import { launchBrowser, watchCsp } from "../support/Chromium.ts"
import { startPeer } from "../support/NotificationPeers.ts"
import { freePort, startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"
import { startSmtpServer, type SmtpTestServer } from "../support/SmtpServer.ts"

/**
 * Answers from the message, end to end, on the bundled server (embedded database) with an SMTP server and a
 * chat webhook receiver: a decision's email carries one link per option and Decline, and the person's chat
 * message the same as url buttons; a HEAD or GET of a link (a mail scanner) changes nothing; the link opened in
 * Chromium answers only after its confirmation, as the person it was sent to; a second use is refused; another
 * holder's link then shows how the decision ended; a post from another site is refused; no token reaches a log.
 */

const running: Array<RunningServer> = []
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
  await Promise.all(cleanups.splice(0).map((f) => f()))
})

/** A busy machine can take minutes to start the server. */
const slowStart = { readyWithinMillis: 240_000 }

/** The answer links an email offers, by label, from its plain-text part (`<label>: <url>` lines). */
const linksIn = (text: string) =>
  new Map(
    [...text.matchAll(/^(.+): (https?:\/\/\S+\/answer\?token=\S+)$/gm)].map((m) => [m[1]!.trim(), m[2]!] as const)
  )

const emailWithLinks = (smtp: SmtpTestServer, email: string, title: string) =>
  until(
    `${email}'s email with answer links`,
    async () => smtp.to(email).find((m) => m.subject === title && m.text.includes("/answer?token=")),
    60_000
  )

describe("answering a decision from its email or chat message (bundled server, SMTP, chat)", () => {
  it("links per option, nothing on GET or HEAD, the confirmation answers once, as the person", async () => {
    const smtp = await startSmtpServer()
    cleanups.push(smtp.close)
    const chat = await startPeer()
    cleanups.push(chat.close)
    const ports = { hub: await freePort(), decisions: await freePort(), tasks: await freePort() }
    const hub = `http://127.0.0.1:${ports.hub}`
    const decisionsUrl = `http://127.0.0.1:${ports.decisions}`
    const env = {
      DATA_DIR: tempDataDir(),
      HUB_PORT: String(ports.hub),
      DECISIONS_PORT: String(ports.decisions),
      TASKS_PORT: String(ports.tasks),
      HUB_PUBLIC_URL: hub,
      SMTP_URL: smtp.url,
      SMTP_FROM: "Workspace <hub@acme.test>",
      HUB_WORKER_POLL_MS: "100",
      EVENT_RELAY_POLL_MS: "100",
      // Every request is logged (its path without the query): no token may be in those lines.
      LOG_LEVEL: "Debug"
    }
    const server = await startServer(env, slowStart)
    running.push(server)
    const p: Platform = await platform(server, env.DATA_DIR)
    const { key } = await acmeWithDecisions(p)
    for (const email of ["ann@acme.test", "bob@acme.test"]) {
      const chosen = await p.hubAdmin("PUT", `/api/v1/admin/users/${encodeURIComponent(email)}/preferences`, {
        channels: ["bell", "email", "chat"],
        emailMode: "immediate",
        chatWebhookUrl: chat.url(`/hooks/${email}`)
      })
      assert.strictEqual(chosen.status, 200, JSON.stringify(chosen.json))
    }

    const created = await p.caller(key, "/api/v1/decisions", {
      title: "Refund order 42?",
      roleSlug: "finance",
      options: [{ label: "Refund" }, { label: "Keep" }]
    })
    assert.strictEqual(created.status, 201, JSON.stringify(created.json))
    const decision = created.json.data.decision as { id: string; options: Array<{ id: string; label: string }> }
    const read = async () => {
      const response = await fetch(`${decisionsUrl}/api/v1/decisions/${decision.id}`, {
        headers: { authorization: `Bearer ${key}` }
      })
      assert.strictEqual(response.status, 200)
      return ((await response.json()) as { data: { decision: unknown } }).data.decision as {
        status: string
        resolution?: { kind: string; optionId?: string; decidedBy: string }
      }
    }

    // The email: one link per option and Decline, each to the decisions service's answer page.
    const annMail = await emailWithLinks(smtp, "ann@acme.test", "Refund order 42?")
    const annLinks = linksIn(annMail.text)
    assert.deepStrictEqual([...annLinks.keys()], ["Refund", "Keep", "Decline"])
    for (const url of annLinks.values()) {
      assert.isTrue(url.startsWith(`${decisionsUrl}/answer?token=`), url)
      assert.include(annMail.html, `href="${url}"`)
    }
    const bobLinks = linksIn((await emailWithLinks(smtp, "bob@acme.test", "Refund order 42?")).text)
    assert.notStrictEqual(bobLinks.get("Keep"), annLinks.get("Keep"))

    // The chat message: the same links as url buttons, and as plain links for receivers without blocks.
    const posted = await until("Ann's chat message", async () => chat.to("/hooks/ann@acme.test")[0], 60_000)
    const message = JSON.parse(posted.body.toString("utf8")) as {
      text: string
      blocks: Array<{ type: string; elements?: Array<{ type: string; url: string; text: { text: string } }> }>
    }
    const buttons = message.blocks.find((b) => b.type === "actions")!.elements!
    assert.deepStrictEqual(
      buttons.map((b) => [b.type, b.text.text]),
      [
        ["button", "Refund"],
        ["button", "Keep"],
        ["button", "Decline"]
      ]
    )
    for (const button of buttons) {
      assert.isTrue(button.url.startsWith(`${decisionsUrl}/answer?token=`))
      assert.include(message.text, `<${button.url}|${button.text.text}>`)
    }

    // A mail scanner follows the link: a HEAD and a GET show the page and change nothing.
    const keep = annLinks.get("Keep")!
    const head = await fetch(keep, { method: "HEAD" })
    assert.strictEqual(head.status, 200)
    const scanned = await fetch(keep)
    assert.strictEqual(scanned.status, 200)
    assert.strictEqual(scanned.headers.get("cache-control"), "no-store")
    assert.include(scanned.headers.get("content-security-policy") ?? "", "default-src 'none'")
    assert.include(await scanned.text(), "Nothing is recorded until you confirm")
    assert.strictEqual((await read()).status, "pending")

    // A post from another site's page is refused, whatever its token.
    const token = new URL(keep).searchParams.get("token")!
    const crossSite = await fetch(`${decisionsUrl}/answer`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://elsewhere.test" },
      body: new URLSearchParams({ token }).toString()
    })
    assert.strictEqual(crossSite.status, 403)
    await crossSite.text()
    assert.strictEqual((await read()).status, "pending")

    // Ann opens her Keep link in a browser (no session anywhere): the page asks; confirming answers, as Ann.
    const browser = await launchBrowser()
    cleanups.push(() => browser.close())
    const page = await browser.newPage()
    const violations = watchCsp(page)
    const opened = await page.goto(keep)
    assert.strictEqual(opened?.status(), 200)
    assert.include(await page.textContent("h1"), 'Answer "Keep"?')
    assert.strictEqual((await read()).status, "pending")
    await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")])
    assert.strictEqual(await page.textContent("h1"), "Your answer is recorded")
    const answered = await read()
    assert.strictEqual(answered.status, "resolved")
    assert.deepInclude(answered.resolution, {
      kind: "chosen",
      optionId: decision.options.find((o) => o.label === "Keep")!.id,
      decidedBy: "ann@acme.test"
    })
    assert.deepStrictEqual(violations, [])

    // A second use of the link is refused: the decision stays as Ann answered it.
    // Back to the link's page: it is loaded again (never kept) and shows the outcome, with no form to post.
    await page.goBack()
    assert.strictEqual(await page.textContent("h1"), "This decision is closed")
    assert.strictEqual(await page.locator("form").count(), 0)
    const again = await fetch(`${decisionsUrl}/answer`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: decisionsUrl },
      body: new URLSearchParams({ token }).toString()
    })
    assert.strictEqual(again.status, 409)
    assert.include(await again.text(), "Answered by ann@acme.test: Keep.")
    assert.deepInclude((await read()).resolution, { decidedBy: "ann@acme.test" })

    // Bob's link now shows what happened instead of a form.
    const bobPage = await browser.newPage()
    await bobPage.goto(bobLinks.get("Refund")!)
    assert.strictEqual(await bobPage.textContent("h1"), "This decision is closed")
    assert.include(await bobPage.textContent("main"), "Answered by ann@acme.test: Keep.")
    assert.strictEqual(await bobPage.locator("form").count(), 0)

    // A tampered link answers nothing.
    const tampered = await fetch(`${decisionsUrl}/answer?token=${token.slice(0, -1)}${token.endsWith("0") ? "1" : "0"}`)
    assert.strictEqual(tampered.status, 404)
    await tampered.text()

    assert.notInclude(server.output(), token)
    assert.notInclude(server.output(), new URL(bobLinks.get("Refund")!).searchParams.get("token")!)
  }, 300_000)
})
