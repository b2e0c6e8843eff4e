/**
 * In-process micro-benchmarks of pure core functions on the hot paths: operations per second of one call
 * in a loop, after a warm-up. They locate cost inside a request; the HTTP figures are the ones that count.
 */
import { Effect } from "effect"
import { mint, verify as verifyToken } from "../core/auth/IdentityToken.ts"
import { sign, verify } from "../core/auth/Signature.ts"
import type { Decision } from "../core/decisions/Decision.ts"
import { step } from "../core/decisions/DecisionMachine.ts"

export interface MicroResult {
  readonly name: string
  readonly opsPerSecond: number
}

const measure = async (name: string, op: () => unknown, seconds: number): Promise<MicroResult> => {
  for (let i = 0; i < 200; i++) await op()
  const started = performance.now()
  const until = started + seconds * 1000
  let count = 0
  while (performance.now() < until) {
    await op()
    count++
  }
  return { name, opsPerSecond: Math.round(count / ((performance.now() - started) / 1000)) }
}

export const microBenchmarks = async (seconds = 1): Promise<ReadonlyArray<MicroResult>> => {
  const now = Math.floor(Date.now() / 1000)
  const body = JSON.stringify({ id: "01J", type: "decisions.notification.created", data: { x: "y".repeat(800) } })
  const signature = sign({ secret: "bench-signing-key", timestamp: now, payload: body })
  const token = await Effect.runPromise(
    mint({ key: "bench-embed-key-0001", issuer: "hub", audience: "decisions", subject: "a@b.co", nowSeconds: now })
  )
  const decision: Decision = {
    id: "01JDECISION0000000000000000",
    organizationId: "org",
    callerName: "agent",
    roleSlug: "ops",
    status: "pending",
    title: "t",
    facts: [],
    links: [],
    options: [
      { id: "a", label: "A" },
      { id: "b", label: "B" }
    ],
    urgency: "normal",
    infoRequests: [],
    assignmentHistory: [],
    createdAt: new Date().toISOString(),
    updatedAt: new Date().toISOString(),
    version: 0
  }
  return [
    await measure(
      "signature verify (1 KB body)",
      () =>
        verify({
          secret: "bench-signing-key",
          timestamp: String(now),
          signature,
          payload: body,
          nowSeconds: now
        }),
      seconds
    ),
    await measure(
      "identity token verify",
      () =>
        Effect.runPromise(
          verifyToken({ token, key: "bench-embed-key-0001", issuer: "hub", audience: "decisions", nowSeconds: now })
        ),
      seconds
    ),
    await measure(
      "decision machine: choose",
      () => step(decision, { _tag: "Choose", actor: "a@b.co", optionId: "a" }, Date.now()),
      seconds
    )
  ]
}
