/**
 * The raw baseline's decision create (bench/BaselineServer.ts: read the JSON body, one INSERT, answer 201 with
 * the decision), written on the stack the bundled server stands on: Effect's HTTP router on its Node server and
 * Effect's Postgres client, and nothing else (no authentication, no idempotency, no log line, no outbox). What
 * it costs per request is the least a create served by that stack can cost; bench/floor.ts sets it beside the
 * raw baseline. Run as a child process; configured by environment variables:
 *
 * - FLOOR_PORT: where to listen (loopback).
 * - FLOOR_DATABASE_URL: a Postgres server; its table goes in schema `floor`.
 * - FLOOR_ANSWER_ONLY=1: answer the body's decision without the INSERT (the HTTP stack alone).
 *
 * `GET /decisions/:id` is the baseline's read the same way: one SELECT of the decision's document by id, its
 * answer the document; with FLOOR_ANSWER_ONLY, the last decision created, held in memory.
 */
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql"
import { createServer } from "node:http"
import { ulid } from "ulid"
import { decisionsTable } from "./BaselineTables.ts"

const port = Number(process.env["FLOOR_PORT"] ?? "0")
const url = process.env["FLOOR_DATABASE_URL"]
if (url === undefined) throw new Error("FLOOR_DATABASE_URL is needed")
const answerOnly = process.env["FLOOR_ANSWER_ONLY"] === "1"

/** The last decision created (what FLOOR_ANSWER_ONLY's GET answers). */
let last: unknown = undefined

const Routes = HttpRouter.use(
  Effect.fnUntraced(function* (router) {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE SCHEMA IF NOT EXISTS floor`
    yield* sql.unsafe(decisionsTable("floor"))
    yield* router.add("GET", "/ready", Effect.succeed(HttpServerResponse.jsonUnsafe({ data: { status: "ready" } })))
    yield* router.add(
      "POST",
      "/decisions",
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const input = JSON.parse(yield* Effect.orDie(request.text)) as { readonly roleSlug: string }
        const decision = { ...input, id: ulid(), organizationId: "org", status: "pending" }
        if (!answerOnly) {
          yield* Effect.orDie(
            sql`INSERT INTO floor.decisions (id, organization_id, role_slug, status, created_at, doc)
              VALUES (${decision.id}, ${decision.organizationId}, ${input.roleSlug}, 'pending',
                ${new Date().toISOString()}::timestamptz, ${JSON.stringify(decision)}::jsonb)`
          )
        }
        last = decision
        return HttpServerResponse.jsonUnsafe({ data: { decision } }, { status: 201 })
      })
    )
    yield* router.add(
      "GET",
      "/decisions/:id",
      Effect.gen(function* () {
        if (answerOnly) return HttpServerResponse.jsonUnsafe({ data: last })
        const { id } = yield* HttpRouter.params
        const rows = yield* Effect.orDie(sql<{ doc: unknown }>`SELECT doc FROM floor.decisions WHERE id = ${id}`)
        return rows[0] === undefined
          ? HttpServerResponse.jsonUnsafe({ error: { code: "NOT_FOUND" } }, { status: 404 })
          : HttpServerResponse.jsonUnsafe({ data: rows[0].doc })
      })
    )
  })
)

const Database = PgClient.layer({ url: Redacted.make(url), maxConnections: 10 })

NodeRuntime.runMain(
  Layer.launch(
    HttpRouter.serve(Routes, { disableLogger: true }).pipe(
      Layer.provide(NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" })),
      Layer.provide(Database)
    )
  )
)
