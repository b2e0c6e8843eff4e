import { readFileSync } from "node:fs"
import { join } from "node:path"
import { randomUUID } from "node:crypto"
import { assert } from "vitest"
import type { RunningServer } from "./ServerProcess.ts"
import { until } from "./Until.ts"
import { mintToken } from "./Tokens.ts"

/**
 * The bundled server's hub and decisions service spoken to through their public APIs: the hub as its operator
 * (the development admin key), decisions' workspace plane as a person (an identity token minted with the
 * development embed key) and its caller plane with a caller key.
 */

export { until } from "./Until.ts"

export interface FeedItem {
  readonly id: string
  readonly service: string
  readonly eventId: string
  readonly title: string
  readonly body: string | null
  readonly url: string | null
  readonly category: string | null
  readonly readAt: string | null
}

export interface DeliveryRow {
  readonly notificationId: string
  readonly channel: string
  readonly target: string
  readonly status: string
  readonly attempts: number
}

/** The hub, the decisions service and an organization with people in both, on a running server. */
export const platform = async (server: RunningServer, dataDir: string) =>
  platformAt(
    { hub: `http://127.0.0.1:${server.ports.hub}`, decisions: `http://127.0.0.1:${server.ports.decisions}` },
    JSON.parse(readFileSync(join(dataDir, "dev-secrets.json"), "utf8")) as Record<string, string>
  )

/** As `platform`, for a hub and a decisions service at the addresses given, sharing the `secrets` given. */
export const platformAt = async (
  urls: { readonly hub: string; readonly decisions: string },
  secrets: Record<string, string>
) => {
  const at = (service: "hub" | "decisions") => urls[service]
  const call = async (url: string, init: RequestInit = {}) => {
    const response = await fetch(url, init)
    const text = await response.text()
    return { status: response.status, json: text === "" ? undefined : JSON.parse(text) }
  }
  const hubAdmin = (method: string, path: string, body?: unknown) =>
    call(`${at("hub")}${path}`, {
      method,
      headers: { authorization: `Bearer ${secrets["HUB_ADMIN_KEY"]}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  /** The operator's view of a person: their feed and the delivery log. */
  const log = async (
    email: string
  ): Promise<{ notifications: ReadonlyArray<FeedItem>; deliveries: ReadonlyArray<DeliveryRow> }> => {
    const answer = await hubAdmin("GET", `/api/v1/admin/users/${encodeURIComponent(email)}/notifications?limit=200`)
    assert.strictEqual(answer.status, 200)
    return answer.json.data
  }
  const feed = async (email: string): Promise<ReadonlyArray<FeedItem>> => (await log(email)).notifications
  const token = (email: string, orgId: string, orgRole: string) =>
    mintToken({
      key: secrets["DECISIONS_EMBED_KEY"]!,
      issuer: "platform-hub",
      audience: "decisions",
      email,
      companyId: orgId,
      orgRole
    })
  const workspace = async (token: string, path: string, body: unknown) =>
    call(`${at("decisions")}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-decisions-api-key": secrets["DECISIONS_API_KEY"]!,
        "x-workspace-token": token
      },
      body: JSON.stringify(body)
    })
  const caller = (key: string, path: string, body: unknown, idempotencyKey: string = randomUUID()) =>
    call(`${at("decisions")}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${key}`,
        "idempotency-key": idempotencyKey
      },
      body: JSON.stringify(body)
    })
  return { secrets, hubAdmin, log, feed, token, workspace, caller }
}

export type Platform = Awaited<ReturnType<typeof platform>>

/** Acme at the hub (Ann and Bob members, Carol its admin) and in decisions: `finance` held by Ann and Bob. */
export const acme = async (p: Platform) => {
  const orgId = (await p.hubAdmin("POST", "/api/v1/admin/orgs", { name: "Acme" })).json.data.org.id as string
  for (const [email, name, role] of [
    ["ann@acme.test", "Ann", "MEMBER"],
    ["bob@acme.test", "Bob", "MEMBER"],
    ["carol@acme.test", "Carol", "ADMIN"]
  ] as const) {
    assert.strictEqual((await p.hubAdmin("POST", "/api/v1/admin/users", { email, name })).status, 201)
    assert.strictEqual((await p.hubAdmin("POST", `/api/v1/admin/orgs/${orgId}/members`, { email, role })).status, 201)
  }
  const carol = await p.token("carol@acme.test", orgId, "ADMIN")
  assert.strictEqual(
    (await p.workspace(carol, "/api/v1/workspace/roles", { slug: "finance", name: "Finance" })).status,
    201
  )
  assert.strictEqual(
    (await p.workspace(carol, "/api/v1/workspace/roles", { slug: "legal", name: "Legal" })).status,
    201
  )
  for (const member of ["ann@acme.test", "bob@acme.test"]) {
    const assigned = await p.workspace(carol, "/api/v1/workspace/roles/finance/assignments", { memberEmail: member })
    assert.strictEqual(assigned.status, 201)
  }
  const key = (await p.workspace(carol, "/api/v1/workspace/keys", { name: "Refund agent" })).json.data
    .plaintext as string
  return { orgId, key }
}

/** What a person's feed holds for one decision: its notifications of `category`. */
/** `acme`, once the hub has the decisions service live, with decisions installed for Acme with its consents. */
export const acmeWithDecisions = async (p: Platform) => {
  await until(
    "the first-party services to go live",
    async () => {
      const answer = await p.hubAdmin("GET", "/api/v1/admin/services")
      const live = (answer.json?.data?.services ?? []).filter((s: { status: string }) => s.status === "live")
      return live.some((s: { id: string }) => s.id === "decisions") ? true : undefined
    },
    120_000
  )
  const made = await acme(p)
  const installed = await p.hubAdmin("PUT", `/api/v1/admin/orgs/${made.orgId}/installations/decisions`, {
    consents: { companyId: true, accessClaims: true, embed: false }
  })
  assert.isBelow(installed.status, 300, JSON.stringify(installed.json))
  return made
}

export const about = (items: ReadonlyArray<FeedItem>, decisionId: string, category: string) =>
  items.filter(
    (n) => n.service === "decisions" && n.url === `/apps/decisions/decision-${decisionId}` && n.category === category
  )
