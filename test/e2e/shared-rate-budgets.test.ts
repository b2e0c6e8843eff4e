import { assert, describe, it } from "@effect/vitest"
import { type Context, Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { RateLimitsFromStore, RateLimitsMemory } from "../../adapters/http/RateLimits.ts"
import { IdempotencyStoreMemory } from "../../adapters/memory/IdempotencyStoreMemory.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { rateLimitMigrations } from "../../adapters/sql/ratelimits/migrations.ts"
import { RateLimiterStoreSql } from "../../adapters/sql/ratelimits/RateLimiterStoreSql.ts"
import type { RateLimits } from "../../core/kernel/RateLimit.ts"
import { sqlBackends } from "../support/Databases.ts"
import { DecisionsMemory } from "../support/DecisionsMemory.ts"
import { freshPrefix, redisLayer, testRedisUrl } from "../support/Redis.ts"
import { twoWaysIn } from "../support/TwoInstances.ts"
import { newCallerKey, serveDecisions } from "../support/DecisionsServed.ts"

const budget = 6

/**
 * Two instances of the decisions service over the same data: each its own routes, MCP endpoint and rate-limit
 * store client (its own pool, its own Redis connection), as a load balancer spreads them.
 */
const twoInstances = (budgets: readonly [Layer.Layer<RateLimits, unknown>, Layer.Layer<RateLimits, unknown>]) =>
  Effect.gen(function* () {
    // The decisions data in memory, seen by both instances: what is under test is where the budgets are kept.
    const data = yield* Layer.build(Layer.fresh(Layer.merge(DecisionsMemory, IdempotencyStoreMemory)))
    const urls: Array<string> = []
    for (const limits of budgets) {
      const built = yield* Layer.build(Layer.fresh(limits))
      const { baseUrl } = yield* serveDecisions(Layer.merge(Layer.succeedContext(data), Layer.succeedContext(built)), {
        settings: { decisionsCallerRequestsPerMinute: budget }
      })
      urls.push(baseUrl)
    }
    return urls as unknown as readonly [string, string]
  })

interface Answered {
  readonly status: number
  readonly retryAfter: string | null
  readonly code: string | undefined
}

const answered = (response: Response) =>
  response.text().then((text): Answered => {
    let code: string | undefined
    try {
      code = JSON.parse(text)?.error?.code
    } catch {
      code = undefined
    }
    return { status: response.status, retryAfter: response.headers.get("retry-after"), code }
  })

const overHttp = (baseUrl: string, key: string) =>
  Effect.promise(() =>
    fetch(`${baseUrl}/api/v1/decisions`, { headers: { authorization: `Bearer ${key}` } }).then(answered)
  )

const overMcp = (baseUrl: string, key: string) =>
  Effect.promise(() =>
    fetch(`${baseUrl}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream"
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "agent", version: "1" } }
      })
    }).then(answered)
  )

/** `count` requests of one caller key, in turn: HTTP on the first, MCP on the second, HTTP on the second, MCP on the first. */
const spread = (urls: readonly [string, string], key: string, count: number) =>
  Effect.gen(function* () {
    const [a, b] = urls
    const ways = [overHttp(a, key), overMcp(b, key), overHttp(b, key), overMcp(a, key)]
    const answers: Array<Answered> = []
    for (let i = 0; i < count; i++) answers.push(yield* ways[i % ways.length]!)
    return answers
  })

/** The caller key's budget is spent once, whichever instance and protocol each request reaches. */
const assertOneBudget = (urls: readonly [string, string]) =>
  Effect.gen(function* () {
    const key = yield* newCallerKey(urls[0])
    const answers = yield* spread(urls, key, budget + 3)
    assert.deepStrictEqual(
      answers.map((answer) => answer.status),
      [...Array.from({ length: budget }, () => 200), 429, 429, 429]
    )
    for (const refused of answers.slice(budget)) {
      assert.strictEqual(refused.code, "RATE_LIMITED")
      const wait = Number(refused.retryAfter)
      assert.isTrue(Number.isInteger(wait) && wait >= 1 && wait <= 60, `Retry-After ${refused.retryAfter}`)
    }
  })

const sqlBudgets = (database: Context.Context<SqlClient.SqlClient>) =>
  RateLimitsFromStore.pipe(Layer.provide(RateLimiterStoreSql), Layer.provide(Layer.succeedContext(database)))

describe("one caller key, one budget, across instances and protocols", () => {
  for (const backend of sqlBackends) {
    it.live(
      `on the SQL store (${backend.name}), each instance with its own connection`,
      () =>
        Effect.gen(function* () {
          const { first, second } = yield* twoWaysIn(backend, migrationsLayer("rate_limits", rateLimitMigrations))
          yield* assertOneBudget(yield* twoInstances([sqlBudgets(first), sqlBudgets(second)]))
        }).pipe(Effect.scoped),
      // The embedded database takes a while to start on a busy machine.
      60_000
    )
  }

  if (testRedisUrl !== undefined) {
    const url = testRedisUrl
    it.live("on Redis, each instance with its own connection", () =>
      Effect.gen(function* () {
        const prefix = freshPrefix()
        const onRedis = () =>
          RateLimitsFromStore.pipe(
            Layer.provide(RateLimiter.layerStoreRedis({ prefix })),
            Layer.provide(redisLayer(url))
          )
        yield* assertOneBudget(yield* twoInstances([onRedis(), onRedis()]))
      }).pipe(Effect.scoped)
    )
  }

  it.live("apart, each instance on its own memory counts the key alone (the embedded database has one)", () =>
    Effect.gen(function* () {
      const urls = yield* twoInstances([RateLimitsMemory, RateLimitsMemory])
      const key = yield* newCallerKey(urls[0])
      // Each instance sees budget + 1 of the requests: one more than a shared budget would allow in all.
      const answers = yield* spread(urls, key, 2 * budget)
      assert.strictEqual(answers.filter((answer) => answer.status === 200).length, 2 * budget)
    }).pipe(Effect.scoped)
  )
})
