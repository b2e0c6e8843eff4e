import * as NodeRedis from "@effect/platform-node/NodeRedis"
import { Layer } from "effect"
import type * as Redis from "effect/persistence/Redis"
import { randomBytes } from "node:crypto"

const ci = process.env["CI"] === "true"
const redisUrl = process.env["REDIS_URL"]

/**
 * The Redis server tests share rate limits through: REDIS_URL when set. Under CI it is required (its suites
 * fail rather than disappear); outside CI the Redis variants run only when it is set.
 */
export const testRedisUrl: string | undefined =
  redisUrl !== undefined && redisUrl !== "" ? redisUrl : ci ? "redis://redis-required-under-ci.invalid:6379" : undefined

/** A Redis connection of its own (keys written through it expire on their own). */
export const redisLayer = (url: string): Layer.Layer<Redis.Redis, Redis.RedisError> =>
  Layer.fresh(NodeRedis.layer({ url }))

/** A key prefix no other test run writes under. */
export const freshPrefix = () => `hitl-test:${randomBytes(6).toString("hex")}:`
