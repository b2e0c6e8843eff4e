import { afterEach, assert, describe, it } from "vitest"
import { about, acme, platform, until, type Platform } from "../support/DecisionsPlatform.ts"
import { startPeer } from "../support/NotificationPeers.ts"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"
import { startSmtpServer } from "../support/SmtpServer.ts"

/**
 * An escalation ladder on the bundled server and its embedded database (docs/decisions.md, "Escalation"): a
 * decision with a reminder after 2 s and a route to another role after 4 s tells its holders again, then reaches
 * the other role's holder, each once, though the server is killed between the two steps and started again on
 * the same data: in the feed, by email (an SMTP server in the test) and in chat (a webhook receiver).
 */

const running: Array<RunningServer> = []
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
  await Promise.all(cleanups.splice(0).map((close) => close()))
})

/** A busy machine can take minutes to start the server. */
const slowStart = { readyWithinMillis: 240_000 }

/** Lee joins Acme at the hub and holds `legal` in decisions. */
const withLee = async (p: Platform, orgId: string) => {
  assert.strictEqual(
    (await p.hubAdmin("POST", "/api/v1/admin/users", { email: "lee@acme.test", name: "Lee" })).status,
    201
  )
  const member = await p.hubAdmin("POST", `/api/v1/admin/orgs/${orgId}/members`, {
    email: "lee@acme.test",
    role: "MEMBER"
  })
  assert.strictEqual(member.status, 201)
  const carol = await p.token("carol@acme.test", orgId, "ADMIN")
  const assigned = await p.workspace(carol, "/api/v1/workspace/roles/legal/assignments", {
    memberEmail: "lee@acme.test"
  })
  assert.strictEqual(assigned.status, 201)
}

const getDecision = async (server: RunningServer, key: string, id: string) => {
  const response = await fetch(`http://127.0.0.1:${server.ports.decisions}/api/v1/decisions/${id}`, {
    headers: { authorization: `Bearer ${key}` }
  })
  assert.strictEqual(response.status, 200)
  const body = (await response.json()) as { data: { decision: Record<string, any> } }
  return body.data.decision
}

describe("an escalation ladder on the bundled server", () => {
  it("reminds, then routes to the second role's holder, once each, across a SIGKILL between the steps", async () => {
    const smtp = await startSmtpServer()
    cleanups.push(smtp.close)
    const chat = await startPeer()
    cleanups.push(chat.close)
    const env = {
      DATA_DIR: tempDataDir(),
      SMTP_URL: smtp.url,
      SMTP_FROM: "Workspace <hub@acme.test>",
      DECISIONS_WORKER_POLL_MS: "100",
      EVENT_RELAY_POLL_MS: "100",
      HUB_WORKER_POLL_MS: "100",
      LOG_LEVEL: "Error"
    }
    let server = await startServer(env, slowStart)
    running.push(server)
    const p1 = await platform(server, env.DATA_DIR)
    const { orgId, key } = await acme(p1)
    await withLee(p1, orgId)
    const people = ["ann@acme.test", "bob@acme.test", "lee@acme.test"]
    for (const email of people) {
      const chosen = await p1.hubAdmin("PUT", `/api/v1/admin/users/${encodeURIComponent(email)}/preferences`, {
        channels: ["bell", "email", "chat"],
        emailMode: "immediate",
        chatWebhookUrl: chat.url(`/hooks/${email}`)
      })
      assert.strictEqual(chosen.status, 200, JSON.stringify(chosen.json))
    }

    const created = await p1.caller(key, "/api/v1/decisions", {
      title: "Refund order 42?",
      roleSlug: "finance",
      options: [{ label: "Refund" }, { label: "Keep" }],
      escalation: [
        { after: 2, action: "remind" },
        { after: 4, action: "route", toRole: "legal" }
      ]
    })
    assert.strictEqual(created.status, 201, JSON.stringify(created.json))
    const id = created.json.data.decision.id as string
    assert.deepStrictEqual(
      created.json.data.decision.escalation.map((s: { action: string }) => s.action),
      ["remind", "route"]
    )

    // The reminder runs: the server is killed the moment it shows on the decision, before the route is due.
    const reminded = await until("the reminder to run", async () => {
      const decision = await getDecision(server, key, id)
      return decision.escalation[0].ranAt === undefined ? undefined : decision
    })
    server.child.kill("SIGKILL")
    await server.exited
    assert.isUndefined(reminded.escalation[1].ranAt)
    assert.strictEqual(reminded.roleSlug, "finance")

    server = await startServer(env, slowStart)
    running.push(server)
    const p2 = await platform(server, env.DATA_DIR)
    const [routed] = await until("Lee told of the routed decision", async () => {
      const found = about(await p2.feed("lee@acme.test"), id, "decision_assigned")
      return found.length > 0 ? found : undefined
    })
    assert.strictEqual(routed!.body, "system:escalation routed this decision to you.")
    for (const email of ["ann@acme.test", "bob@acme.test"]) {
      const told = await until(`${email} reminded`, async () => {
        const found = about(await p2.feed(email), id, "decision_assigned")
        return found.length >= 2 ? found : undefined
      })
      // The first ask and one reminder, not two.
      assert.lengthOf(told, 2)
      assert.isTrue(told.some((n) => (n.body ?? "").startsWith("Reminder: Refund agent is still waiting")))
    }
    const decision = await getDecision(server, key, id)
    assert.strictEqual(decision.roleSlug, "legal")
    assert.isTrue(decision.escalation.every((s: { ranAt?: string }) => s.ranAt !== undefined))
    assert.lengthOf(
      decision.assignmentHistory.filter((c: { actor: string }) => c.actor === "system:escalation"),
      1
    )
    assert.lengthOf(about(await p2.feed("lee@acme.test"), id, "decision_assigned"), 1)

    // By email and in chat too, each once: Ann and Bob the ask and one reminder (the hub may send the two in
    // one email when both are due at once, as after the restart), Lee the routed decision.
    const asked = "Refund agent asks for your decision."
    const reminder = "Reminder: Refund agent is still waiting for your decision"
    const routedHere = "system:escalation routed this decision to you."
    const expected: Record<string, ReadonlyArray<string>> = {
      "ann@acme.test": [asked, reminder],
      "bob@acme.test": [asked, reminder],
      "lee@acme.test": [routedHere]
    }
    const mailText = (email: string) =>
      smtp
        .to(email)
        .map((m) => m.text)
        .join("\n")
    const times = (text: string, part: string) => text.split(part).length - 1
    const chatsTo = (email: string) => chat.to(`/hooks/${email}`)
    await until("every email and chat message", async () =>
      people.every(
        (e) => expected[e]!.every((part) => times(mailText(e), part) >= 1) && chatsTo(e).length >= expected[e]!.length
      )
        ? true
        : undefined
    )
    // Time for a repeat to arrive, were one sent: the hub's workers poll every 100 ms.
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    for (const email of people) {
      for (const part of expected[email]!) assert.strictEqual(times(mailText(email), part), 1, `${email}: ${part}`)
      assert.lengthOf(chatsTo(email), expected[email]!.length, `${email}'s chat messages`)
    }
    // The reminder offers the answer links, as the first ask did.
    const annMail = mailText("ann@acme.test")
    assert.include(annMail.slice(annMail.indexOf(reminder)), "/answer?token=")
  }, 600_000)
})
