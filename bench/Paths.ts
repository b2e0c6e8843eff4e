/**
 * The benchmarked paths: each is one request shape against the bundled server and its minimal equivalent
 * against the raw baseline (bench/BaselineServer.ts). Whatever must differ per request (idempotency keys,
 * event ids, signatures) is made fresh for every request on both sides.
 */
import { randomBytes } from "node:crypto"
import type { Target } from "./Load.ts"
import type { BundledServer } from "./ServerProcess.ts"
import {
  decisionPayload,
  decisionsSeeded,
  deciderEmail,
  inBatches,
  signedEvent,
  roleSlug,
  taskCreatorEmail,
  taskInboxSize,
  taskPayload,
  taskReaderEmail,
  type BenchData
} from "./Setup.ts"

export interface BenchPath {
  readonly name: string
  readonly server: Target
  readonly baseline: Target
}

const json = { "content-type": "application/json" }

const counter = () => {
  let n = 0
  return () => ++n
}

const call = async (url: string, init: RequestInit) => {
  const response = await fetch(url, init)
  const text = await response.text()
  if (!response.ok) throw new Error(`baseline setup: ${url} answered ${response.status}: ${text.slice(0, 300)}`)
  return JSON.parse(text)
}

/** The baseline's own copy of what the server was given: the same decisions, the reader's inbox of tasks. */
export const seedBaseline = async (origin: string, data: BenchData) => {
  const decision = await call(`${origin}/decisions?org=${data.orgId}`, {
    method: "POST",
    headers: json,
    body: decisionPayload(0)
  })
  await inBatches(decisionsSeeded - 1, (n) =>
    call(`${origin}/decisions?org=${data.orgId}`, { method: "POST", headers: json, body: decisionPayload(n + 1) })
  )
  await inBatches(taskInboxSize, (n) =>
    call(`${origin}/tasks?owner=${encodeURIComponent(taskReaderEmail)}`, {
      method: "POST",
      headers: json,
      body: taskPayload(n)
    })
  )
  return { decisionId: decision.data.decision.id as string }
}

/** Reads first, on the seeded data, so the server and the baseline read tables of the same size; then writes. */
export const benchPaths = async (
  server: BundledServer,
  baseline: { readonly origin: string; readonly decisionId: string },
  data: BenchData,
  decisionsApiKey: string
): Promise<ReadonlyArray<BenchPath>> => {
  // Idempotency keys unique across runs too: the server keeps them 24 hours per caller.
  const run = randomBytes(6).toString("hex")
  const nextCreate = counter()
  const caller = { authorization: `Bearer ${data.callerKey}` }
  const deciderToken = await data.workspaceToken(deciderEmail)
  return [
    {
      name: "decision inbox list",
      server: {
        origin: server.decisions,
        next: () => ({
          method: "GET",
          path: "/api/v1/workspace/decisions?scope=inbox",
          headers: { "x-decisions-api-key": decisionsApiKey, "x-workspace-token": deciderToken }
        })
      },
      baseline: {
        origin: baseline.origin,
        next: () => ({ method: "GET", path: `/inbox?org=${data.orgId}&role=${roleSlug}` })
      }
    },
    {
      name: "decision get",
      server: {
        origin: server.decisions,
        next: () => ({ method: "GET", path: `/api/v1/decisions/${data.decisionId}`, headers: caller })
      },
      baseline: {
        origin: baseline.origin,
        next: () => ({ method: "GET", path: `/decisions/${baseline.decisionId}` })
      }
    },
    {
      name: "task list",
      server: {
        origin: server.tasks,
        next: () => ({ method: "GET", path: "/api/tasks", headers: { "x-api-key": data.readerTaskKey } })
      },
      baseline: {
        origin: baseline.origin,
        next: () => ({ method: "GET", path: `/tasks?owner=${encodeURIComponent(taskReaderEmail)}` })
      }
    },
    {
      name: "decision create",
      server: {
        origin: server.decisions,
        next: () => {
          const n = nextCreate()
          return {
            method: "POST",
            path: "/api/v1/decisions",
            headers: { ...json, ...caller, "idempotency-key": `bench-${run}-${n}` },
            body: decisionPayload(n)
          }
        }
      },
      baseline: {
        origin: baseline.origin,
        next: () => ({
          method: "POST",
          path: `/decisions?org=${data.orgId}`,
          headers: json,
          body: decisionPayload(nextCreate())
        })
      }
    },
    {
      name: "task create",
      server: {
        origin: server.tasks,
        next: () => ({
          method: "POST",
          path: "/api/tasks",
          headers: { ...json, "x-api-key": data.creatorTaskKey },
          body: taskPayload(nextCreate())
        })
      },
      baseline: {
        origin: baseline.origin,
        next: () => ({
          method: "POST",
          path: `/tasks?owner=${encodeURIComponent(taskCreatorEmail)}`,
          headers: json,
          body: taskPayload(nextCreate())
        })
      }
    },
    {
      name: "event ingest",
      server: { origin: server.hub, next: () => signedEvent("/api/webhooks/events", data.signingKey) },
      baseline: { origin: baseline.origin, next: () => signedEvent("/events", data.signingKey) }
    }
  ]
}
