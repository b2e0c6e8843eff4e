import { afterEach, assert, describe, it } from "vitest"
import { about, acmeWithDecisions, platform, until, type Platform } from "../support/DecisionsPlatform.ts"
import { freePort, startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"
import { startSmtpServer, type SmtpTestServer } from "../support/SmtpServer.ts"
import { isSignInMail, signInByEmailedLink } from "../support/EmailSignIn.ts"

/**
 * Notifications reach people, end to end, on the bundled server and its embedded database with an SMTP server
 * and one-second email digests: a caller's decision for a role reaches each holder's own feed (read with the
 * session they got from the emailed sign-in link) and an email whose link opens the decision's page; the
 * caller's answer reaches the person who asked; a server killed between a decision and its email (while the
 * mail server refuses it, or before the hub even heard of the decision) sends that email exactly once after
 * its restart.
 */

const running: Array<RunningServer> = []
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
  await Promise.all(cleanups.splice(0).map((f) => f()))
})

const holders = ["ann@acme.test", "bob@acme.test"] as const
const options = [{ label: "Refund" }, { label: "Keep" }]
const batchMillis = 1000
/** A busy machine can take minutes to start the server. */
const slowStart = { readyWithinMillis: 240_000 }
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A GET with the person's session. */
const get = async (url: string, cookie: string) => {
  const response = await fetch(url, { headers: { cookie }, redirect: "manual" })
  const text = await response.text()
  return { status: response.status, text, contentType: response.headers.get("content-type") ?? "" }
}

/** The notification emails (not sign-in links) a person received that name `link`. */
const emailsAbout = (smtp: SmtpTestServer, email: string, link: string) =>
  smtp.to(email).filter((m) => !isSignInMail(m) && m.text.includes(link))

describe("notifications reach people (embedded database, SMTP, one-second digests)", () => {
  it("feed, email link to the page, the answer to the asker, and exactly one email across a crash", async () => {
    const smtp = await startSmtpServer()
    cleanups.push(smtp.close)
    const ports = { hub: await freePort(), decisions: await freePort(), tasks: await freePort() }
    const hub = `http://127.0.0.1:${ports.hub}`
    const env = {
      DATA_DIR: tempDataDir(),
      HUB_PORT: String(ports.hub),
      DECISIONS_PORT: String(ports.decisions),
      TASKS_PORT: String(ports.tasks),
      HUB_PUBLIC_URL: hub,
      SMTP_URL: smtp.url,
      SMTP_FROM: "Workspace <hub@acme.test>",
      HUB_EMAIL_BATCH_MS: String(batchMillis),
      // A refused email is tried again two seconds later, for as long as the test needs.
      HUB_DELIVERY_RETRY_SCHEDULE: Array.from({ length: 30 }, () => "2").join(","),
      HUB_WORKER_POLL_MS: "100",
      EVENT_RELAY_POLL_MS: "100",
      LOG_LEVEL: "Error"
    }
    let server = await startServer(env, slowStart)
    running.push(server)
    const p: Platform = await platform(server, env.DATA_DIR)
    const { orgId, key } = await acmeWithDecisions(p)
    const sessions = new Map<string, string>()
    for (const email of holders) {
      sessions.set(email, `hub_session=${await signInByEmailedLink({ hubUrl: hub, smtp, email })}`)
    }

    // The caller asks the role; each holder has it in their own feed, unread, and in an email.
    const created = await p.caller(key, "/api/v1/decisions", {
      title: "Refund order 42?",
      roleSlug: "finance",
      options
    })
    assert.strictEqual(created.status, 201)
    const id = created.json.data.decision.id as string
    const path = `/apps/decisions/decision-${id}`
    for (const email of holders) {
      const cookie = sessions.get(email)!
      const item = await until(`${email}'s feed to have the decision`, async () => {
        const feed = await get(`${hub}/api/v1/me/notifications`, cookie)
        assert.strictEqual(feed.status, 200)
        const data = JSON.parse(feed.text).data
        const found = data.items.find((n: { url: string | null }) => n.url === path)
        return found === undefined ? undefined : { found, unreadCount: data.unreadCount as number }
      })
      assert.deepInclude(item.found, { service: "decisions", title: "Refund order 42?", url: path, readAt: null })
      assert.isAtLeast(item.unreadCount, 1)

      const [mail] = await until(
        `${email}'s email about the decision`,
        async () => {
          const found = emailsAbout(smtp, email, `${hub}${path}`)
          return found.length > 0 ? found : undefined
        },
        60_000
      )
      assert.include(mail!.text, "Refund order 42?")
      assert.include(mail!.html, `href="${hub}${path}"`)
      // The link opens the workspace, and the workspace's page for it is the decision's page.
      const link = /https?:\/\/\S+\/apps\/decisions\/decision-[A-Za-z0-9]+/.exec(mail!.text)?.[0]
      assert.strictEqual(link, `${hub}${path}`)
      const opened = await fetch(link!, { headers: { cookie, accept: "text/html" }, redirect: "manual" })
      assert.strictEqual(opened.status, 200)
      assert.include(opened.headers.get("content-type") ?? "", "text/html")
      await opened.text()
      const page = await get(`${hub}/api/v1/workspace/apps/decisions/pages/${link!.split("/").pop()}`, cookie)
      assert.strictEqual(page.status, 200, page.text)
      const document = JSON.parse(page.text).data.page
      assert.strictEqual(document.id, `decision-${id}`)
      assert.strictEqual(document.title, "Refund order 42?", page.text)
    }

    // Ann asks; the caller answers; Ann, and nobody else, hears of it.
    const ann = await p.token("ann@acme.test", orgId, "MEMBER")
    const asked = await p.workspace(ann, `/api/v1/workspace/decisions/${id}/info-requests`, {
      question: "Which order?"
    })
    assert.strictEqual(asked.status, 200)
    const infoRequestId = asked.json.data.decision.infoRequests[0].id as string
    const answered = await p.caller(key, `/api/v1/decisions/${id}/info-response`, {
      infoRequestId,
      answer: "Order 42, the blue one"
    })
    assert.strictEqual(answered.status, 200)
    await until("Ann's feed to have the answer", async () => {
      const feed = JSON.parse((await get(`${hub}/api/v1/me/notifications`, sessions.get("ann@acme.test")!)).text)
      return feed.data.items.some(
        (n: { url: string | null; body: string | null }) =>
          n.url === path && n.body === "Your question was answered: Order 42, the blue one"
      )
        ? true
        : undefined
    })
    assert.lengthOf(about(await p.feed("ann@acme.test"), id, "info_answered"), 1)
    assert.lengthOf(about(await p.feed("bob@acme.test"), id, "info_answered"), 0)
    // Its email, too, before the crash below (so that nothing of Ann's is still waiting then).
    await until("Ann's email about the answer", async () =>
      smtp.to("ann@acme.test").some((m) => m.text.includes("Order 42, the blue one")) ? true : undefined
    )

    // A second decision while the mail server refuses: filed, its email not sent; the server dies.
    smtp.behave({ refuse: 451 })
    const second = await p.caller(key, "/api/v1/decisions", { title: "Refund order 77?", roleSlug: "finance", options })
    assert.strictEqual(second.status, 201)
    const secondId = second.json.data.decision.id as string
    const secondPath = `/apps/decisions/decision-${secondId}`
    for (const email of holders) {
      await until(
        `${email}'s email about the second decision refused and waiting for its retry`,
        async () => {
          const log = await p.log(email)
          const [notification] = about(log.notifications, secondId, "decision_assigned")
          if (notification === undefined) return undefined
          const email_ = log.deliveries.find((d) => d.notificationId === notification.id && d.channel === "email")
          return email_ !== undefined && email_.status === "pending" && email_.attempts >= 1 ? true : undefined
        },
        60_000
      )
    }
    const before = new Map(holders.map((email) => [email, smtp.to(email).length]))
    server.child.kill("SIGKILL")
    await server.exited
    assert.isAbove(smtp.refused(), 0)
    for (const email of holders) assert.lengthOf(emailsAbout(smtp, email, `${hub}${secondPath}`), 0)

    // Restarted on the same data, the mail server accepting: each holder gets that email once.
    smtp.behave("accept")
    server = await startServer(env, slowStart)
    running.push(server)
    for (const email of holders) {
      await until(
        `${email}'s email about the second decision after the restart`,
        async () => (emailsAbout(smtp, email, `${hub}${secondPath}`).length > 0 ? true : undefined),
        60_000
      )
    }
    // A few digest intervals and retry steps later, still one each.
    await sleep(5 * batchMillis)
    for (const email of holders) {
      const mails = emailsAbout(smtp, email, `${hub}${secondPath}`)
      assert.lengthOf(mails, 1, email)
      assert.include(mails[0]!.text, "Refund order 77?")
      const log = await p.log(email)
      const [notification] = about(log.notifications, secondId, "decision_assigned")
      assert.deepStrictEqual(
        log.deliveries.filter((d) => d.notificationId === notification!.id).map((d) => [d.channel, d.status]),
        [["email", "sent"]]
      )
      // Nothing else was sent again after the restart.
      assert.lengthOf(smtp.to(email), before.get(email)! + 1, email)
    }

    // Earlier still: killed after the decision committed and before the hub heard of it (the relays of this
    // run look for the hub where nothing listens). After the restart the whole way runs, once.
    server.child.kill("SIGKILL")
    await server.exited
    server = await startServer(
      { ...env, HUB_URL: `http://127.0.0.1:${await freePort()}`, EVENT_RELAY_POLL_MS: "3600000" },
      slowStart
    )
    running.push(server)
    const third = await p.caller(key, "/api/v1/decisions", { title: "Refund order 99?", roleSlug: "finance", options })
    assert.strictEqual(third.status, 201)
    const thirdPath = `/apps/decisions/decision-${third.json.data.decision.id as string}`
    for (const email of holders)
      assert.lengthOf(about(await p.feed(email), third.json.data.decision.id, "decision_assigned"), 0)
    const beforeThird = new Map(holders.map((email) => [email, smtp.to(email).length]))
    server.child.kill("SIGKILL")
    await server.exited
    server = await startServer(env, slowStart)
    running.push(server)
    for (const email of holders) {
      await until(
        `${email}'s email about the third decision after the restart`,
        async () => (emailsAbout(smtp, email, `${hub}${thirdPath}`).length > 0 ? true : undefined),
        60_000
      )
    }
    await sleep(5 * batchMillis)
    for (const email of holders) {
      assert.lengthOf(emailsAbout(smtp, email, `${hub}${thirdPath}`), 1, email)
      assert.lengthOf(smtp.to(email), beforeThird.get(email)! + 1, email)
    }
  }, 300_000)
})
