import { Context, Effect, Exit, Layer, Scope } from "effect"
import fc from "fast-check"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, it } from "vitest"
import {
  checkAnswer,
  hostileRequest,
  plainRequest,
  operationsOf,
  send,
  type FuzzTarget,
  type Operation
} from "../support/ContractFuzz.ts"
import { DecisionsMemory } from "../support/DecisionsMemory.ts"
import { IdempotencyStoreMemory } from "../../adapters/memory/IdempotencyStoreMemory.ts"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"
import { opsKey, tasksMemoryData, tasksServer, TasksServer } from "../support/TasksStack.ts"
import { testDecisionsKeys } from "../support/ServiceSettings.ts"
import { mintToken } from "../support/Tokens.ts"
import { serveDecisions } from "../support/DecisionsServed.ts"

/**
 * The contract fuzz: for every operation of each service's OpenAPI document, hostile requests (wrong types,
 * huge and deep values, unpaired surrogates, NUL, prototype keys, wrong content types, odd paths and
 * headers, with and without valid credentials) are answered with the service's documented error shape and
 * a 4xx, or the operation's success: never a 5xx, a stack, a path, a vendor or a setting's name. On SQL
 * (the bundled server on its embedded database) and on the memory adapters (the decisions service and the
 * task inbox composed over them).
 */

const runsPerOperation = 4
const machineKey = "fuzz-machine-key-0123456789abcdef"

const fuzz = async (target: FuzzTarget, operations: ReadonlyArray<Operation>) => {
  for (const operation of operations) {
    await fc.assert(
      fc.asyncProperty(hostileRequest(operation, target), async (request) => {
        const answer = await send(target.baseUrl, request)
        // What the environment lacks (an upstream down, a feature not configured) answers 501, 502 or 503
        // whatever the input: only a status a plain request to the operation does not get is the input's doing.
        const baseline =
          answer.status > 500
            ? (await send(target.baseUrl, plainRequest(operation, request.headers))).status
            : undefined
        checkAnswer(target, request, answer, baseline)
      }),
      { numRuns: runsPerOperation, endOnFailure: true }
    )
  }
}

const workspaceToken = (embedKey: string, organization: string) =>
  mintToken({
    key: embedKey,
    issuer: "platform-hub",
    audience: "decisions",
    email: "admin@fuzz.test",
    companyId: organization,
    orgRole: "ADMIN"
  })

/** A caller key and a workspace token of one organization, made on the workspace plane. */
const decisionsCredentials = async (baseUrl: string, apiKey: string, embedKey: string) => {
  const token = await workspaceToken(embedKey, "fuzz")
  const workspace = { "x-decisions-api-key": apiKey, "x-workspace-token": token }
  const created = await fetch(`${baseUrl}/api/v1/workspace/keys`, {
    method: "POST",
    headers: { "content-type": "application/json", ...workspace },
    body: JSON.stringify({ name: "fuzz" })
  })
  const key = ((await created.json()) as any).data.plaintext as string
  return [{ authorization: `Bearer ${key}` }, workspace]
}

describe("contract fuzz over SQL: the bundled server on its embedded database", () => {
  let server: RunningServer
  const targets: Array<{ target: FuzzTarget; operations: ReadonlyArray<Operation> }> = []

  beforeAll(async () => {
    const dataDir = tempDataDir()
    server = await startServer(
      {
        DATA_DIR: dataDir,
        LOG_LEVEL: "None",
        TASKS_MACHINE_KEYS: `${machineKey}:ops@fuzz.test:Fuzz Bot`,
        HUB_CONTEXT_KEYS: "tasks:fuzz-context-key-0123456789"
      },
      { readyWithinMillis: 170_000 }
    )
    const secrets = JSON.parse(readFileSync(join(dataDir, "dev-secrets.json"), "utf8")) as Record<string, string>
    const url = (port: number) => `http://127.0.0.1:${port}`
    targets.push(
      {
        target: {
          name: "hub",
          baseUrl: url(server.ports.hub),
          dialect: "envelope",
          credentials: [{ authorization: `Bearer ${secrets["HUB_ADMIN_KEY"]}` }]
        },
        operations: await operationsOf(url(server.ports.hub))
      },
      {
        target: {
          name: "decisions",
          baseUrl: url(server.ports.decisions),
          dialect: "envelope",
          credentials: await decisionsCredentials(
            url(server.ports.decisions),
            secrets["DECISIONS_API_KEY"]!,
            secrets["DECISIONS_EMBED_KEY"]!
          )
        },
        operations: await operationsOf(url(server.ports.decisions))
      },
      {
        target: {
          name: "tasks",
          baseUrl: url(server.ports.tasks),
          dialect: "tasks",
          credentials: [{ "x-api-key": machineKey }]
        },
        operations: await operationsOf(url(server.ports.tasks))
      }
    )
  }, 180_000)

  afterAll(async () => {
    await server?.stop("SIGKILL")
  })

  for (const name of ["hub", "decisions", "tasks"]) {
    it(`every operation of the ${name} contract answers hostile requests in its error shape, never 5xx`, async () => {
      const found = targets.find((t) => t.target.name === name)!
      await fuzz(found.target, found.operations)
    }, 120_000)
  }
})

const { apiKey, embedKey } = testDecisionsKeys

describe("contract fuzz over the memory adapters: the decisions service and the task inbox", () => {
  const scope = Effect.runSync(Scope.make())
  const targets: Array<{ target: FuzzTarget; operations: ReadonlyArray<Operation> }> = []

  beforeAll(async () => {
    const decisions = await Effect.runPromise(
      serveDecisions(Layer.merge(DecisionsMemory, IdempotencyStoreMemory), {
        settings: { decisionsCallerRequestsPerMinute: 100_000, decisionsUserRequestsPerMinute: 100_000 }
      }).pipe(Scope.provide(scope))
    )
    const tasks = await Effect.runPromise(
      Layer.build(tasksServer(tasksMemoryData)).pipe(
        Effect.map((context) => Context.get(context, TasksServer)),
        Scope.provide(scope)
      )
    )
    targets.push(
      {
        target: {
          name: "decisions",
          baseUrl: decisions.baseUrl,
          dialect: "envelope",
          credentials: await decisionsCredentials(decisions.baseUrl, apiKey, embedKey)
        },
        operations: await operationsOf(decisions.baseUrl)
      },
      {
        target: { name: "tasks", baseUrl: tasks.baseUrl, dialect: "tasks", credentials: [{ "x-api-key": opsKey.key }] },
        operations: await operationsOf(tasks.baseUrl)
      }
    )
  }, 60_000)

  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  for (const name of ["decisions", "tasks"]) {
    it(`every operation of the ${name} contract answers hostile requests in its error shape, never 5xx`, async () => {
      const found = targets.find((t) => t.target.name === name)!
      await fuzz(found.target, found.operations)
    }, 120_000)
  }
})
