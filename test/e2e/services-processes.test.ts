import { randomBytes } from "node:crypto"
import { afterEach, assert, describe, it } from "vitest"
import { SecretNames } from "../../apps/server/Config.ts"
import { acmeWithDecisions, platformAt, until } from "../support/DecisionsPlatform.ts"
import { isSignInMail, signInByEmailedLink } from "../support/EmailSignIn.ts"
import { freshPrefix } from "../support/Redis.ts"
import { freshPostgres } from "../support/ServerDatabases.ts"
import { freePort, startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"
import { startSmtpServer, type SmtpTestServer } from "../support/SmtpServer.ts"

/**
 * One service per process: the hub, two decisions instances and the task inbox, each started alone
 * (`SERVICES`) on one Postgres database and one Redis, reaching each other at HUB_URL, DECISIONS_URL and
 * TASKS_URL. The notifications walk-through runs across them: a decision created on one decisions instance
 * reaches its role's holders by email (once), is answered through the hub's workspace, and the caller's
 * long-poll on the other decisions instance is answered.
 */

const serverUrl = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"
const redisUrl = process.env["REDIS_URL"] ?? "redis://127.0.0.1:6379"

const running: Array<RunningServer> = []
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
  await Promise.all(cleanups.splice(0).map((f) => f()))
})

/** A busy machine can take minutes to start a server. */
const slowStart = { readyWithinMillis: 240_000 }
const batchMillis = 1000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The platform's secrets, the same for every instance (as docs/deploy.md asks). */
const sharedSecrets = () =>
  Object.fromEntries(
    SecretNames.filter((name) => name !== "HUB_VAPID_PRIVATE_KEY").map((name) => [
      name,
      randomBytes(24).toString("base64url")
    ])
  )

/** Whether anything answers on a loopback port. */
const answersOn = (port: number) =>
  fetch(`http://127.0.0.1:${port}/api/v1/health`, { signal: AbortSignal.timeout(2_000) }).then(
    () => true,
    () => false
  )

const emailsAbout = (smtp: SmtpTestServer, email: string, link: string) =>
  smtp.to(email).filter((m) => !isSignInMail(m) && m.text.includes(link))

describe("one service per process (SERVICES) on one Postgres database and Redis", () => {
  it("a decision made on one decisions instance, emailed once, answered in the hub's workspace, its long-poll on the other answered", async () => {
    const database = await freshPostgres(serverUrl, "services")
    cleanups.push(database.drop)
    const smtp = await startSmtpServer()
    cleanups.push(smtp.close)
    const ports = {
      hub: await freePort(),
      decisionsA: await freePort(),
      decisionsB: await freePort(),
      tasks: await freePort()
    }
    const url = (port: number) => `http://127.0.0.1:${port}`
    const secrets = sharedSecrets()
    const shared = {
      ...secrets,
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: freshPrefix(),
      HUB_URL: url(ports.hub),
      // The hub reaches the decisions service at one instance (a load balancer's address in production).
      DECISIONS_URL: url(ports.decisionsA),
      TASKS_URL: url(ports.tasks),
      HUB_PUBLIC_URL: url(ports.hub),
      TASKS_PUBLIC_URL: url(ports.tasks),
      SMTP_URL: smtp.url,
      SMTP_FROM: "Workspace <hub@acme.test>",
      HUB_EMAIL_BATCH_MS: String(batchMillis),
      HUB_WORKER_POLL_MS: "100",
      EVENT_RELAY_POLL_MS: "100",
      LOG_LEVEL: "Error"
    }
    const start = async (services: string, port: Record<string, number>) => {
      const server = await startServer(
        {
          ...shared,
          SERVICES: services,
          DATA_DIR: tempDataDir(),
          ...Object.fromEntries(Object.entries(port).map(([name, value]) => [name, String(value)]))
        },
        slowStart
      )
      running.push(server)
      return server
    }
    const [hubProcess, decisionsA, decisionsB, tasksProcess] = await Promise.all([
      start("hub", { HUB_PORT: ports.hub }),
      start("decisions", { DECISIONS_PORT: ports.decisionsA }),
      start("decisions", { DECISIONS_PORT: ports.decisionsB }),
      start("tasks", { TASKS_PORT: ports.tasks })
    ])
    // Each process listens on its own service's port only.
    assert.isFalse(await answersOn(hubProcess.ports.decisions))
    assert.isFalse(await answersOn(hubProcess.ports.tasks))
    assert.isFalse(await answersOn(decisionsA.ports.hub))
    assert.isFalse(await answersOn(decisionsB.ports.tasks))
    assert.isFalse(await answersOn(tasksProcess.ports.hub))
    assert.isFalse(await answersOn(tasksProcess.ports.decisions))
    const tasksManifest = await fetch(`${url(ports.tasks)}/api/v1/health`)
    assert.strictEqual(tasksManifest.status, 200)

    const p = await platformAt({ hub: url(ports.hub), decisions: url(ports.decisionsA) }, secrets)
    const { key } = await acmeWithDecisions(p)
    const annSession = `hub_session=${await signInByEmailedLink({ hubUrl: url(ports.hub), smtp, email: "ann@acme.test" })}`

    // The caller asks on instance A.
    const options = [{ label: "Refund" }, { label: "Keep" }]
    const created = await p.caller(key, "/api/v1/decisions", {
      title: "Refund order 42?",
      roleSlug: "finance",
      options
    })
    assert.strictEqual(created.status, 201, JSON.stringify(created.json))
    const decision = created.json.data.decision
    const id = decision.id as string
    const link = `${url(ports.hub)}/apps/decisions/decision-${id}`

    // Each holder is emailed about it (the relay of either instance to the hub, the hub's mail worker).
    for (const email of ["ann@acme.test", "bob@acme.test"]) {
      await until(`${email}'s email about the decision`, async () =>
        emailsAbout(smtp, email, link).length > 0 ? true : undefined
      )
    }

    // The caller long-polls on instance B.
    const polled = fetch(`${url(ports.decisionsB)}/api/v1/decisions/${id}?wait=60`, {
      headers: { authorization: `Bearer ${key}` }
    }).then(async (response) => ({ status: response.status, json: (await response.json()) as any }))
    await sleep(500)

    // Ann answers in the hub's workspace, as its page does: the decision's page, then its first action.
    const hubGet = (path: string) =>
      fetch(`${url(ports.hub)}${path}`, { headers: { cookie: annSession } }).then(async (r) => ({
        status: r.status,
        json: (await r.json()) as any
      }))
    const page = await hubGet(`/api/v1/workspace/apps/decisions/pages/decision-${id}`)
    assert.strictEqual(page.status, 200, JSON.stringify(page.json))
    const row = page.json.data.page.blocks.find((b: { type: string }) => b.type === "actionRow")
    const actionId = row.actions[0].actionId as string
    const clicked = await fetch(
      `${url(ports.hub)}/api/v1/workspace/apps/decisions/actions/${encodeURIComponent(actionId)}`,
      {
        method: "POST",
        headers: {
          cookie: annSession,
          "content-type": "application/json",
          "idempotency-key": randomBytes(8).toString("hex")
        },
        body: "{}"
      }
    )
    assert.strictEqual(clicked.status, 200, await clicked.clone().text())
    assert.deepStrictEqual(await clicked.json(), { data: { result: "ok", refresh: true } })

    // Instance B's long-poll answers with the resolution recorded through instance A.
    const answered = await polled
    assert.strictEqual(answered.status, 200, JSON.stringify(answered.json))
    assert.strictEqual(answered.json.data.decision.resolution.optionId, decision.options[0].id)
    assert.strictEqual(answered.json.data.decision.resolution.decidedBy, "ann@acme.test")

    // A few digest intervals later, each holder still has exactly one email about the decision.
    await sleep(5 * batchMillis)
    for (const email of ["ann@acme.test", "bob@acme.test"]) {
      assert.lengthOf(emailsAbout(smtp, email, link), 1, email)
    }
  }, 600_000)
})
