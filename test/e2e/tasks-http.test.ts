import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { hashSecret } from "../../core/auth/IssuedSecret.ts"
import { RecordStore, type Fields } from "../../core/tasks/RecordStore.ts"
import { SessionStore } from "../../core/tasks/SessionStore.ts"
import { TaskAccess } from "../../core/tasks/TaskAccess.ts"
import { ProducerOutbox } from "../../core/events/ProducerOutbox.ts"
import { Priorities, Statuses } from "../../core/tasks/Values.ts"
import { pglite, sqlBackends } from "../support/Databases.ts"
import { request } from "../support/Http.ts"
import {
  opsKey,
  publicUrl,
  tasksAirtableData,
  tasksMemoryData,
  tasksServer,
  tasksSqlData,
  TasksServer
} from "../support/TasksStack.ts"

const backends = [
  { name: "memory", data: tasksMemoryData },
  ...sqlBackends.map((backend) => ({ name: backend.name, data: tasksSqlData(backend) })),
  // The records in an Airtable base (a stand-in; without its rate here, which the proposal race test keeps).
  { name: "airtable stand-in", data: tasksAirtableData(pglite) }
]

const mustBeOneOf = (values: ReadonlyArray<string>) => `Must be one of: ${values.join(", ")}`
const isoDaysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString()

/** What tests need: people with keys of their own (fresh per test, so tests share the server safely), seeding. */
const fixture = Effect.gen(function* () {
  const { baseUrl } = yield* TasksServer
  const access = yield* TaskAccess
  const records = yield* RecordStore
  const sessions = yield* SessionStore
  const outbox = yield* ProducerOutbox

  const send = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
    request(`${baseUrl}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
    })

  const newUser = (name: string) =>
    Effect.gen(function* () {
      const email = `${name.toLowerCase()}.${randomUUID().slice(0, 8)}@example.com`
      const record = yield* records.create("collaborators", { email, name })
      const user = { id: record.id, email, name }
      const { key } = yield* access.createApiKey(user, "tests")
      const call = (method: string, path: string, body?: unknown) => send(method, path, { "x-api-key": key }, body)
      return { ...user, key, call }
    })

  const create = (table: Parameters<typeof records.create>[0], fields: Fields) => records.create(table, fields)

  /** A client with a project, its account manager, an outcome. */
  const newProject = (name: string, managerId?: string) =>
    Effect.gen(function* () {
      const client = yield* create("clients", { name: `${name} Client ${randomUUID().slice(0, 6)}` })
      const project = yield* create("projects", {
        name: `${name} ${randomUUID().slice(0, 6)}`,
        status: "Active",
        priority: "P2: Medium Priority",
        client: [client.id],
        accountManager: managerId === undefined ? [] : [managerId]
      })
      return { client, project }
    })

  return { baseUrl, records, sessions, outbox, send, newUser, create, newProject }
})

for (const backend of backends) {
  describe(`task inbox over HTTP (${backend.name})`, () =>
    layer(tasksServer(backend.data), { excludeTestServices: true, timeout: 60_000 })((it) => {
      it.effect("GET /health needs no credential and answers {status: 'ok', timestamp}", () =>
        Effect.gen(function* () {
          const { send } = yield* fixture
          const health = yield* send("GET", "/health", {})
          assert.strictEqual(health.status, 200)
          assert.deepStrictEqual(Object.keys(health.json).sort(), ["status", "timestamp"])
          assert.strictEqual(health.json.status, "ok")
          assert.isTrue(Number.isFinite(Date.parse(health.json.timestamp)))
          const uniform = yield* send("GET", "/api/v1/health", {})
          assert.deepStrictEqual(uniform.json, { data: { status: "ok" } })
        })
      )

      it.effect("every /api/* route answers 401 {error} without a key or with an unknown one", () =>
        Effect.gen(function* () {
          const { send } = yield* fixture
          for (const [method, path] of [
            ["GET", "/api/tasks"],
            ["POST", "/api/tasks"],
            ["GET", "/api/proposals"],
            ["GET", "/api/clients"],
            ["GET", "/api/settings"],
            ["GET", "/api/settings/api-keys"]
          ] as const) {
            const none = yield* send(method, path, {}, method === "POST" ? { title: "x" } : undefined)
            assert.strictEqual(none.status, 401, `${method} ${path}`)
            assert.deepStrictEqual(Object.keys(none.json), ["error"])
            const wrong = yield* send(method, path, { "x-api-key": `tsk_${"A".repeat(43)}` })
            assert.strictEqual(wrong.status, 401, `${method} ${path}`)
          }
        })
      )

      it.effect("GET /auth/me accepts only a session cookie: an API key alone is 401 {error}", () =>
        Effect.gen(function* () {
          const { send, newUser, sessions } = yield* fixture
          const alice = yield* newUser("Alice")
          const withKey = yield* alice.call("GET", "/auth/me")
          assert.strictEqual(withKey.status, 401)
          assert.isString(withKey.json.error)
          const cookie = `session-${randomUUID()}`
          yield* sessions.create({
            hash: hashSecret(cookie),
            email: alice.email,
            name: alice.name,
            expiresAt: new Date(Date.now() + 3_600_000).toISOString()
          })
          const me = yield* send("GET", "/auth/me", { cookie: `tasks_session=${cookie}` })
          assert.strictEqual(me.status, 200)
          assert.deepStrictEqual(me.json, { user: { email: alice.email, name: alice.name } })
          // The session also works on /api/* routes.
          const inbox = yield* send("GET", "/api/tasks", { cookie: `tasks_session=${cookie}` })
          assert.strictEqual(inbox.status, 200)
          const unknown = yield* send("GET", "/auth/me", { cookie: `tasks_session=${randomUUID()}` })
          assert.strictEqual(unknown.status, 401)
          const expired = `session-${randomUUID()}`
          yield* sessions.create({
            hash: hashSecret(expired),
            email: alice.email,
            name: alice.name,
            expiresAt: new Date(Date.now() - 1000).toISOString()
          })
          assert.strictEqual((yield* send("GET", "/auth/me", { cookie: `tasks_session=${expired}` })).status, 401)
        })
      )

      it.effect("an operator machine key acts as its email and name", () =>
        Effect.gen(function* () {
          const { send } = yield* fixture
          const created = yield* send("POST", "/api/tasks", { "x-api-key": opsKey.key }, { title: "From the bot" })
          assert.strictEqual(created.status, 201)
          assert.strictEqual(created.json.task.assignedTo.email, opsKey.email)
          assert.strictEqual(created.json.task.assignedTo.name, opsKey.name)
          assert.match(created.json.task.assignedTo.id, /^usr/)
        })
      )

      it.effect(
        "POST /api/tasks answers 201 {ok: true, task} with the task inbox contract's defaults; the task is in the inbox",
        () =>
          Effect.gen(function* () {
            const { newUser } = yield* fixture
            const alice = yield* newUser("Alice")
            const created = yield* alice.call("POST", "/api/tasks", { title: "Draft the Q3 plan" })
            assert.strictEqual(created.status, 201)
            assert.strictEqual(created.json.ok, true)
            const task = created.json.task
            assert.match(task.id, /^rec/)
            assert.deepInclude(task, {
              title: "Draft the Q3 plan",
              description: "",
              status: "Ready to Start",
              triageStatus: "New",
              origin: "Human",
              originDetail: "",
              priority: "P2: Medium Priority",
              triageNotes: "",
              assignedToAI: "",
              projectName: "",
              dueDate: null,
              startDate: null,
              hoursEstimated: null,
              hoursUsed: null,
              isArchived: false,
              linkToTaskInterface: `${publicUrl}/tasks/${task.id}`
            })
            assert.deepStrictEqual(task.project, [])
            const me = { id: alice.id, email: alice.email, name: alice.name }
            assert.deepStrictEqual(task.assignedTo, me)
            assert.deepStrictEqual(task.requestedBy, me)
            assert.isTrue(Number.isFinite(Date.parse(task.createdAt)))
            const inbox = yield* alice.call("GET", "/api/tasks")
            assert.deepStrictEqual(inbox.json, { tasks: [task] })
            assert.deepStrictEqual((yield* alice.call("GET", `/api/tasks/${task.id}`)).json, { task })
          })
      )

      it.effect("priority aliases are accepted in any case and answered canonical; other fields as sent", () =>
        Effect.gen(function* () {
          const { newUser, newProject } = yield* fixture
          const alice = yield* newUser("Alice")
          const bob = yield* newUser("Bob")
          const { project } = yield* newProject("Apollo")
          const created = yield* alice.call("POST", "/api/tasks", {
            title: "Call the client",
            description: "About the renewal",
            priority: "  HIGH ",
            origin: "ai agent",
            originDetail: "meeting-bot",
            assignedTo: bob.email.toUpperCase(),
            project: project.id
          })
          assert.strictEqual(created.status, 201)
          assert.deepInclude(created.json.task, {
            priority: "P1: Top Priority",
            origin: "AI Agent",
            originDetail: "meeting-bot",
            projectName: project.fields["name"]
          })
          assert.strictEqual(created.json.task.assignedTo.id, bob.id)
          assert.strictEqual(created.json.task.requestedBy.id, alice.id)
          assert.deepStrictEqual(created.json.task.project, [project.id])
        })
      )

      it.effect("bad create bodies are 400 {error: 'Validation failed', fields} naming each bad field", () =>
        Effect.gen(function* () {
          const { newUser } = yield* fixture
          const alice = yield* newUser("Alice")
          const bad = yield* alice.call("POST", "/api/tasks", {
            title: "x".repeat(121),
            description: "d".repeat(501),
            priority: "someday",
            origin: "robot"
          })
          assert.strictEqual(bad.status, 400)
          assert.deepStrictEqual(bad.json, {
            error: "Validation failed",
            fields: {
              title: "Must be at most 120 characters",
              description: "Must be at most 500 characters",
              priority: mustBeOneOf(Priorities),
              origin: mustBeOneOf(["Human", "AI Agent", "Automation"])
            }
          })
          const okLengths = yield* alice.call("POST", "/api/tasks", {
            title: "t".repeat(120),
            description: "d".repeat(500)
          })
          assert.strictEqual(okLengths.status, 201)
          const missing = yield* alice.call("POST", "/api/tasks", { description: "no title" })
          assert.strictEqual(missing.status, 400)
          assert.strictEqual(missing.json.error, "Validation failed")
          assert.property(missing.json.fields, "title")
          const wrongType = yield* alice.call("POST", "/api/tasks", { title: 42 })
          assert.strictEqual(wrongType.status, 400)
          assert.property(wrongType.json.fields, "title")
          const badJson = yield* alice.call("POST", "/api/tasks", "{not json")
          assert.strictEqual(badJson.status, 400)
          assert.deepStrictEqual(badJson.json, { error: "Validation failed", fields: { body: "Must be valid JSON" } })
          const stranger = yield* alice.call("POST", "/api/tasks", { title: "x", assignedTo: "nobody@example.com" })
          assert.strictEqual(stranger.status, 400)
          assert.property(stranger.json.fields, "assignedTo")
          const noProject = yield* alice.call("POST", "/api/tasks", { title: "x", project: "recNoSuchProject0" })
          assert.strictEqual(noProject.status, 400)
          assert.property(noProject.json.fields, "project")
        })
      )

      it.effect("another user's task is 404 {error} for every task route, as an unknown id is", () =>
        Effect.gen(function* () {
          const { newUser, newProject } = yield* fixture
          const alice = yield* newUser("Alice")
          const mallory = yield* newUser("Mallory")
          const { project } = yield* newProject("Hermes")
          const task = (yield* alice.call("POST", "/api/tasks", { title: "Private" })).json.task
          for (const id of [task.id, "recUnknownTask000"]) {
            for (const [method, path, body] of [
              ["GET", `/api/tasks/${id}`, undefined],
              ["PATCH", `/api/tasks/${id}`, { title: "Mine now" }],
              ["POST", `/api/tasks/${id}/accept`, { projectId: project.id }],
              ["POST", `/api/tasks/${id}/reject`, { reason: "no" }],
              ["POST", `/api/tasks/${id}/needs-info`, { note: "?" }],
              ["POST", `/api/tasks/${id}/archive`, undefined],
              ["POST", `/api/tasks/${id}/delegate`, { assignedTo: mallory.email }],
              ["POST", `/api/tasks/${id}/shortlink`, undefined]
            ] as const) {
              const answer = yield* mallory.call(method, path, body)
              assert.strictEqual(answer.status, 404, `${method} ${path}`)
              assert.deepStrictEqual(Object.keys(answer.json), ["error"])
            }
          }
          assert.deepStrictEqual((yield* alice.call("GET", `/api/tasks/${task.id}`)).json.task, task)
        })
      )

      it.effect("PATCH changes only the fields sent, accepts aliases, and null clears a clearable field", () =>
        Effect.gen(function* () {
          const { newUser } = yield* fixture
          const alice = yield* newUser("Alice")
          const bob = yield* newUser("Bob")
          const task = (yield* alice.call("POST", "/api/tasks", { title: "Plan", description: "Some text" })).json.task
          const patched = yield* alice.call("PATCH", `/api/tasks/${task.id}`, {
            priority: "urgent",
            status: "in progress",
            dueDate: "2026-12-24",
            startDate: "2026-12-01",
            hoursEstimated: 3.5,
            triageNotes: "Looks fine"
          })
          assert.strictEqual(patched.status, 200)
          assert.deepStrictEqual(patched.json.task, {
            ...task,
            priority: "P0: Urgent & Critical",
            status: "In Progress",
            dueDate: "2026-12-24",
            startDate: "2026-12-01",
            hoursEstimated: 3.5,
            triageNotes: "Looks fine"
          })
          const cleared = yield* alice.call("PATCH", `/api/tasks/${task.id}`, {
            dueDate: null,
            description: null,
            assignedTo: bob.id
          })
          assert.strictEqual(cleared.json.task.dueDate, null)
          assert.strictEqual(cleared.json.task.description, "")
          assert.strictEqual(cleared.json.task.startDate, "2026-12-01")
          assert.strictEqual(cleared.json.task.assignedTo.id, bob.id)
          const bad = yield* alice.call("PATCH", `/api/tasks/${task.id}`, {
            status: "Finished",
            triageStatus: "Maybe",
            title: null,
            dueDate: "24/12/2026"
          })
          assert.strictEqual(bad.status, 400)
          assert.deepStrictEqual(bad.json, {
            error: "Validation failed",
            fields: {
              status: mustBeOneOf(Statuses),
              triageStatus: mustBeOneOf(["New", "Accepted", "Rejected", "Needs More Info"]),
              title: "Cannot be cleared",
              dueDate: "Must be a date as YYYY-MM-DD"
            }
          })
        })
      )

      it.effect(
        "accept links the project with the status sent (default Ready to Start); the task leaves the inbox",
        () =>
          Effect.gen(function* () {
            const { newUser, newProject } = yield* fixture
            const alice = yield* newUser("Alice")
            const { project } = yield* newProject("Zeus")
            const one = (yield* alice.call("POST", "/api/tasks", { title: "One" })).json.task
            const two = (yield* alice.call("POST", "/api/tasks", { title: "Two" })).json.task
            const accepted = yield* alice.call("POST", `/api/tasks/${one.id}/accept`, { projectId: project.id })
            assert.strictEqual(accepted.status, 200)
            assert.deepInclude(accepted.json.task, {
              triageStatus: "Accepted",
              status: "Ready to Start",
              projectName: project.fields["name"]
            })
            assert.deepStrictEqual(accepted.json.task.project, [project.id])
            const withStatus = yield* alice.call("POST", `/api/tasks/${two.id}/accept`, {
              projectId: project.id,
              status: "IN PROGRESS"
            })
            assert.strictEqual(withStatus.json.task.status, "In Progress")
            assert.deepStrictEqual((yield* alice.call("GET", "/api/tasks")).json.tasks, [])
            const mine = (yield* alice.call("GET", "/api/tasks/mine")).json.tasks.map((t: any) => t.id)
            assert.sameMembers(mine, [one.id, two.id])
            const missing = yield* alice.call("POST", `/api/tasks/${one.id}/accept`, {})
            assert.strictEqual(missing.status, 400)
            assert.property(missing.json.fields, "projectId")
            const unknown = yield* alice.call("POST", `/api/tasks/${one.id}/accept`, { projectId: "recNoSuchProject0" })
            assert.strictEqual(unknown.status, 400)
            assert.property(unknown.json.fields, "projectId")
            const badStatus = yield* alice.call("POST", `/api/tasks/${one.id}/accept`, {
              projectId: project.id,
              status: "Shipped"
            })
            assert.deepStrictEqual(badStatus.json, {
              error: "Validation failed",
              fields: { status: mustBeOneOf(Statuses) }
            })
          })
      )

      it.effect("the inbox lists the most urgent first (P0 to P4), newest first within a priority", () =>
        Effect.gen(function* () {
          const { newUser } = yield* fixture
          const alice = yield* newUser("Alice")
          for (const [title, priority] of [
            ["low", "low"],
            ["urgent", "urgent"],
            ["medium, older", "medium"],
            ["lowest", "lowest"],
            ["medium, newer", "medium"],
            ["top", "high"]
          ]) {
            const created = yield* alice.call("POST", "/api/tasks", { title, priority })
            assert.strictEqual(created.status, 201, created.text)
          }
          const inbox = (yield* alice.call("GET", "/api/tasks")).json.tasks as ReadonlyArray<{ title: string }>
          assert.deepStrictEqual(
            inbox.map((t) => t.title),
            ["urgent", "top", "medium, newer", "medium, older", "low", "lowest"]
          )
        })
      )

      it.effect("reject stores the reason, needs-info the note; both leave the inbox; rejected is in history", () =>
        Effect.gen(function* () {
          const { newUser } = yield* fixture
          const alice = yield* newUser("Alice")
          const one = (yield* alice.call("POST", "/api/tasks", { title: "One" })).json.task
          const two = (yield* alice.call("POST", "/api/tasks", { title: "Two" })).json.task
          const rejected = yield* alice.call("POST", `/api/tasks/${one.id}/reject`, { reason: "Out of scope" })
          assert.strictEqual(rejected.json.task.triageStatus, "Rejected")
          assert.include(rejected.json.task.triageNotes, "Out of scope")
          const asked = yield* alice.call("POST", `/api/tasks/${two.id}/needs-info`, { note: "Which client?" })
          assert.strictEqual(asked.json.task.triageStatus, "Needs More Info")
          assert.include(asked.json.task.triageNotes, "Which client?")
          assert.deepStrictEqual((yield* alice.call("GET", "/api/tasks")).json.tasks, [])
          assert.deepStrictEqual(
            (yield* alice.call("GET", "/api/tasks/mine")).json.tasks.map((t: any) => t.id),
            [two.id]
          )
          assert.deepStrictEqual(
            (yield* alice.call("GET", "/api/tasks/history")).json.tasks.map((t: any) => t.id),
            [one.id]
          )
          const noReason = yield* alice.call("POST", `/api/tasks/${two.id}/reject`, {})
          assert.strictEqual(noReason.status, 400)
          assert.property(noReason.json.fields, "reason")
          const noNote = yield* alice.call("POST", `/api/tasks/${two.id}/needs-info`, { note: 7 })
          assert.strictEqual(noNote.status, 400)
          assert.property(noNote.json.fields, "note")
        })
      )

      it.effect("archive takes a task out of every list; it can still be read", () =>
        Effect.gen(function* () {
          const { newUser } = yield* fixture
          const alice = yield* newUser("Alice")
          const bob = yield* newUser("Bob")
          const task = (yield* alice.call("POST", "/api/tasks", { title: "For Bob", assignedTo: bob.email })).json.task
          assert.lengthOf((yield* alice.call("GET", "/api/tasks/sent")).json.tasks, 1)
          assert.lengthOf((yield* bob.call("GET", "/api/tasks")).json.tasks, 1)
          const archived = yield* alice.call("POST", `/api/tasks/${task.id}/archive`)
          assert.strictEqual(archived.status, 200)
          assert.strictEqual(archived.json.task.isArchived, true)
          for (const who of [alice, bob]) {
            for (const path of [
              "/api/tasks",
              "/api/tasks/mine",
              "/api/tasks/sent",
              "/api/tasks/search",
              "/api/tasks/history"
            ]) {
              assert.deepStrictEqual((yield* who.call("GET", path)).json, { tasks: [] }, path)
            }
          }
          assert.strictEqual((yield* bob.call("GET", `/api/tasks/${task.id}`)).json.task.isArchived, true)
        })
      )

      it.effect("delegate reassigns by email or usr id and records the hand-off in the triage notes", () =>
        Effect.gen(function* () {
          const { newUser, outbox } = yield* fixture
          const alice = yield* newUser("Alice")
          const bob = yield* newUser("Bob")
          const carol = yield* newUser("Carol")
          const task = (yield* alice.call("POST", "/api/tasks", { title: "Review contract" })).json.task
          const toBob = yield* alice.call("POST", `/api/tasks/${task.id}/delegate`, {
            assignedTo: bob.email,
            reason: "Bob knows the client"
          })
          assert.strictEqual(toBob.status, 200)
          assert.strictEqual(toBob.json.task.assignedTo.id, bob.id)
          assert.include(toBob.json.task.triageNotes, alice.email)
          assert.include(toBob.json.task.triageNotes, bob.email)
          assert.include(toBob.json.task.triageNotes, "Bob knows the client")
          assert.deepStrictEqual(
            (yield* bob.call("GET", "/api/tasks")).json.tasks.map((t: any) => t.id),
            [task.id]
          )
          assert.deepStrictEqual(
            (yield* alice.call("GET", "/api/tasks/sent")).json.tasks.map((t: any) => t.id),
            [task.id]
          )
          // Bob is notified: an event for the hub's notification feed waits in the outbox.
          const notices = (yield* outbox.pending(10_000)).filter((e) => e.subject.email === bob.email)
          assert.lengthOf(notices, 1)
          assert.deepInclude(notices[0]!, {
            type: "tasks.notification.created",
            service: "tasks",
            contractVersion: "v1"
          })
          assert.deepInclude(notices[0]!.data, {
            kind: "task_delegated",
            taskId: task.id,
            title: "Review contract",
            reason: "Bob knows the client",
            link: task.linkToTaskInterface
          })
          const toCarol = yield* bob.call("POST", `/api/tasks/${task.id}/delegate`, { assignedTo: carol.id })
          assert.strictEqual(toCarol.json.task.assignedTo.id, carol.id)
          assert.strictEqual(toCarol.json.task.triageNotes.split("\n").length, 2)
          // Bob is no longer party to it.
          assert.strictEqual((yield* bob.call("GET", `/api/tasks/${task.id}`)).status, 404)
          const unknown = yield* alice.call("POST", `/api/tasks/${task.id}/delegate`, {
            assignedTo: "ghost@example.com"
          })
          assert.strictEqual(unknown.status, 400)
          assert.property(unknown.json.fields, "assignedTo")
          const missing = yield* alice.call("POST", `/api/tasks/${task.id}/delegate`, {})
          assert.strictEqual(missing.status, 400)
        })
      )

      it.effect("a short link is saved once and GET /s/{code} redirects to the task's page", () =>
        Effect.gen(function* () {
          const { newUser } = yield* fixture
          const alice = yield* newUser("Alice")
          const task = (yield* alice.call("POST", "/api/tasks", { title: "Share me" })).json.task
          const link = yield* alice.call("POST", `/api/tasks/${task.id}/shortlink`)
          assert.strictEqual(link.status, 200)
          assert.match(link.json.shortCode, /^[0-9a-z]{8}$/)
          assert.deepStrictEqual(link.json, {
            shortCode: link.json.shortCode,
            shortUrl: `${publicUrl}/s/${link.json.shortCode}`,
            linkToTaskInterface: task.linkToTaskInterface
          })
          assert.deepStrictEqual((yield* alice.call("POST", `/api/tasks/${task.id}/shortlink`)).json, link.json)
        })
      )

      it.effect(
        "GET /s/{code} answers 302 with Location, needs no credential, and 404 {error} for an unknown code",
        () =>
          Effect.gen(function* () {
            const { newUser, baseUrl } = yield* fixture
            const alice = yield* newUser("Alice")
            const task = (yield* alice.call("POST", "/api/tasks", { title: "Share me" })).json.task
            const code = (yield* alice.call("POST", `/api/tasks/${task.id}/shortlink`)).json.shortCode
            const answer = yield* Effect.promise(() => fetch(`${baseUrl}/s/${code}`, { redirect: "manual" }))
            assert.strictEqual(answer.status, 302)
            assert.strictEqual(answer.headers.get("location"), task.linkToTaskInterface)
            const unknown = yield* request(`${baseUrl}/s/nosuchcode`)
            assert.strictEqual(unknown.status, 404)
            assert.deepStrictEqual(Object.keys(unknown.json), ["error"])
          })
      )

      it.effect("bulk applies to the caller's tasks, reports the rest as failed, and checks its body", () =>
        Effect.gen(function* () {
          const { newUser, newProject } = yield* fixture
          const alice = yield* newUser("Alice")
          const mallory = yield* newUser("Mallory")
          const { project } = yield* newProject("Bulk")
          const [a, b, c] = [
            (yield* alice.call("POST", "/api/tasks", { title: "A" })).json.task,
            (yield* alice.call("POST", "/api/tasks", { title: "B" })).json.task,
            (yield* alice.call("POST", "/api/tasks", { title: "C" })).json.task
          ]
          const theirs = (yield* mallory.call("POST", "/api/tasks", { title: "M" })).json.task
          const accept = yield* alice.call("POST", "/api/tasks/bulk", {
            taskIds: [a.id, theirs.id, "recUnknownTask000"],
            action: "accept",
            projectIds: [project.id, "recIgnored0000000"]
          })
          assert.deepStrictEqual(accept.json, { ok: true, successful: [a.id], failedCount: 2 })
          const acceptedA = (yield* alice.call("GET", `/api/tasks/${a.id}`)).json.task
          assert.strictEqual(acceptedA.triageStatus, "Accepted")
          assert.deepStrictEqual(acceptedA.project, [project.id])
          assert.strictEqual((yield* mallory.call("GET", `/api/tasks/${theirs.id}`)).json.task.triageStatus, "New")
          const reject = yield* alice.call("POST", "/api/tasks/bulk", { taskIds: [b.id], action: "reject" })
          assert.deepStrictEqual(reject.json, { ok: true, successful: [b.id], failedCount: 0 })
          const rejectedB = (yield* alice.call("GET", `/api/tasks/${b.id}`)).json.task
          assert.strictEqual(rejectedB.triageStatus, "Rejected")
          assert.include(rejectedB.triageNotes, "Rejected in bulk triage")
          const done = yield* alice.call("POST", "/api/tasks/bulk", { taskIds: [c.id], action: "done" })
          assert.deepStrictEqual(done.json, { ok: true, successful: [c.id], failedCount: 0 })
          assert.strictEqual((yield* alice.call("GET", `/api/tasks/${c.id}`)).json.task.status, "Done")
          const noProjects = yield* alice.call("POST", "/api/tasks/bulk", { taskIds: [c.id], action: "accept" })
          assert.strictEqual(noProjects.status, 400)
          assert.property(noProjects.json.fields, "projectIds")
          const badAction = yield* alice.call("POST", "/api/tasks/bulk", { taskIds: [c.id], action: "delete" })
          assert.deepStrictEqual(badAction.json, {
            error: "Validation failed",
            fields: { action: mustBeOneOf(["accept", "reject", "done"]) }
          })
          const noIds = yield* alice.call("POST", "/api/tasks/bulk", { action: "done" })
          assert.strictEqual(noIds.status, 400)
          assert.property(noIds.json.fields, "taskIds")
        })
      )

      it.effect("sent, search (activeOnly, clientName) and history (days) hold the documented tasks", () =>
        Effect.gen(function* () {
          const { newUser, newProject } = yield* fixture
          const alice = yield* newUser("Alice")
          const bob = yield* newUser("Bob")
          const { client, project } = yield* newProject("Orion")
          const forBob = (yield* alice.call("POST", "/api/tasks", { title: "For Bob", assignedTo: bob.email })).json
            .task
          const own = (yield* alice.call("POST", "/api/tasks", { title: "Own", project: project.id })).json.task
          const done = (yield* alice.call("POST", "/api/tasks", { title: "Done one" })).json.task
          yield* alice.call("PATCH", `/api/tasks/${done.id}`, { status: "Done" })
          const ids = (answer: { json: any }) => answer.json.tasks.map((t: any) => t.id)
          assert.deepStrictEqual(ids(yield* alice.call("GET", "/api/tasks/sent")), [forBob.id])
          assert.deepStrictEqual(ids(yield* bob.call("GET", "/api/tasks/sent")), [])
          assert.sameMembers(ids(yield* alice.call("GET", "/api/tasks/search")), [forBob.id, own.id, done.id])
          assert.sameMembers(ids(yield* alice.call("GET", "/api/tasks/search?activeOnly=true")), [forBob.id, own.id])
          const clientName = String(client.fields["name"]).toUpperCase()
          assert.deepStrictEqual(
            ids(yield* alice.call("GET", `/api/tasks/search?clientName=${encodeURIComponent(clientName)}`)),
            [own.id]
          )
          assert.deepStrictEqual(ids(yield* alice.call("GET", "/api/tasks/search?clientName=NoSuchClientAnywhere")), [])
          const badFlag = yield* alice.call("GET", "/api/tasks/search?activeOnly=yes")
          assert.deepStrictEqual(badFlag.json, {
            error: "Validation failed",
            fields: { activeOnly: mustBeOneOf(["true", "false"]) }
          })
          assert.deepStrictEqual(ids(yield* alice.call("GET", "/api/tasks/history")), [done.id])
          assert.deepStrictEqual(ids(yield* alice.call("GET", "/api/tasks/history?days=1")), [done.id])
          for (const days of ["0", "abc", "-3", "1.5"]) {
            const bad = yield* alice.call("GET", `/api/tasks/history?days=${days}`)
            assert.strictEqual(bad.status, 400, days)
            assert.property(bad.json.fields, "days")
          }
        })
      )

      it.effect("proposals: created open, listed with task, meeting and project context, accepted by the owner", () =>
        Effect.gen(function* () {
          const { newUser, newProject, create } = yield* fixture
          const alice = yield* newUser("Alice")
          const { client, project } = yield* newProject("Atlas")
          const meeting = yield* create("meetings", {
            name: "Atlas weekly",
            startTime: isoDaysAgo(1),
            linkUrl: "https://meet.example.com/atlas",
            linkLabel: "Recording",
            createdBy: [alice.id],
            attendees: [alice.id],
            projects: [project.id]
          })
          const task = (yield* alice.call("POST", "/api/tasks", { title: "Ship v2", project: project.id })).json.task
          const created = yield* alice.call("POST", "/api/proposals", {
            taskId: task.id,
            meetingId: meeting.id,
            type: "Status change",
            proposedChangesObj: { action: "change_status", status: "in progress" }
          })
          assert.strictEqual(created.status, 201)
          const proposal = created.json.proposal
          assert.deepInclude(proposal, { type: "Status change", aiStatus: "To Consider", taskId: task.id })
          assert.deepStrictEqual(proposal.proposedChangesObj, { action: "change_status", status: "In Progress" })
          const listed = (yield* alice.call("GET", "/api/proposals")).json.proposals
          assert.deepStrictEqual(listed, [
            {
              ...proposal,
              taskTitle: "Ship v2",
              meetingData: {
                title: "Atlas weekly",
                date: meeting.fields["startTime"],
                url: "https://meet.example.com/atlas",
                authorName: "Alice"
              },
              projectData: { id: project.id, name: project.fields["name"], clientId: client.id }
            }
          ])
          const accepted = yield* alice.call("POST", `/api/proposals/${proposal.id}/accept`)
          assert.strictEqual(accepted.status, 200)
          assert.strictEqual(accepted.json.proposal.aiStatus, "Accepted")
          assert.deepStrictEqual(accepted.json.task, { ...task, status: "In Progress" })
          assert.deepStrictEqual((yield* alice.call("GET", "/api/proposals")).json, { proposals: [] })
          const again = yield* alice.call("POST", `/api/proposals/${proposal.id}/accept`)
          assert.strictEqual(again.status, 409)
          assert.deepStrictEqual(Object.keys(again.json), ["error"])
          const rejectLate = yield* alice.call("POST", `/api/proposals/${proposal.id}/reject`, { reason: "late" })
          assert.strictEqual(rejectLate.status, 409)
        })
      )

      it.effect(
        "proposals: only the task owner resolves one (403); reject dismisses with the reason; unknown is 404",
        () =>
          Effect.gen(function* () {
            const { newUser } = yield* fixture
            const alice = yield* newUser("Alice")
            const bob = yield* newUser("Bob")
            const task = (yield* bob.call("POST", "/api/tasks", { title: "Bob's", assignedTo: alice.email })).json.task
            // Bob requested it, Alice owns it: Bob may propose, only Alice may resolve.
            const proposal = (yield* bob.call("POST", "/api/proposals", {
              taskId: task.id,
              type: "Priority",
              proposedChangesObj: { action: "change_priority", priority: "low" }
            })).json.proposal
            assert.strictEqual(proposal.proposedChangesObj.priority, "P3: Low Priority")
            assert.deepStrictEqual((yield* bob.call("GET", "/api/proposals")).json, { proposals: [] })
            assert.lengthOf((yield* alice.call("GET", "/api/proposals")).json.proposals, 1)
            for (const [path, body] of [
              [`/api/proposals/${proposal.id}/accept`, undefined],
              [`/api/proposals/${proposal.id}/reject`, { reason: "no" }]
            ] as const) {
              const forbidden = yield* bob.call("POST", path, body)
              assert.strictEqual(forbidden.status, 403)
              assert.deepStrictEqual(Object.keys(forbidden.json), ["error"])
            }
            const noReason = yield* alice.call("POST", `/api/proposals/${proposal.id}/reject`, {})
            assert.strictEqual(noReason.status, 400)
            assert.property(noReason.json.fields, "reason")
            const rejected = yield* alice.call("POST", `/api/proposals/${proposal.id}/reject`, { reason: "Keep it P2" })
            assert.strictEqual(rejected.status, 200)
            assert.strictEqual(rejected.json.proposal.aiStatus, "Rejected")
            assert.strictEqual(
              (yield* alice.call("GET", `/api/tasks/${task.id}`)).json.task.priority,
              "P2: Medium Priority"
            )
            const unknown = yield* alice.call("POST", "/api/proposals/recNoSuchProposal/accept")
            assert.strictEqual(unknown.status, 404)
          })
      )

      it.effect(
        "proposals never reach a task the user is not party to: 404 to propose, skipped and 404 after a hand-off",
        () =>
          Effect.gen(function* () {
            const { newUser } = yield* fixture
            const alice = yield* newUser("Alice")
            const bob = yield* newUser("Bob")
            const mallory = yield* newUser("Mallory")
            const task = (yield* alice.call("POST", "/api/tasks", { title: "Alice's" })).json.task
            const foreign = yield* mallory.call("POST", "/api/proposals", {
              taskId: task.id,
              type: "x",
              proposedChangesObj: { action: "archive_task" }
            })
            assert.strictEqual(foreign.status, 404)
            // Bob asks Alice; Alice owns proposals about the task; then she hands it back to Bob.
            const mine = (yield* bob.call("POST", "/api/tasks", { title: "Bob asks", assignedTo: alice.email })).json
              .task
            const proposal = (yield* alice.call("POST", "/api/proposals", {
              taskId: mine.id,
              type: "x",
              proposedChangesObj: { action: "change_title", title: "Renamed" }
            })).json.proposal
            assert.lengthOf((yield* alice.call("GET", "/api/proposals")).json.proposals, 1)
            yield* alice.call("POST", `/api/tasks/${mine.id}/delegate`, { assignedTo: bob.email })
            assert.deepStrictEqual((yield* alice.call("GET", "/api/proposals")).json, { proposals: [] })
            assert.strictEqual((yield* alice.call("POST", `/api/proposals/${proposal.id}/accept`)).status, 404)
            assert.strictEqual((yield* bob.call("GET", `/api/tasks/${mine.id}`)).json.task.title, "Bob asks")
          })
      )

      it.effect(
        "proposals: a create_task proposal creates the task on accept; proposals of Done tasks are skipped",
        () =>
          Effect.gen(function* () {
            const { newUser, newProject } = yield* fixture
            const alice = yield* newUser("Alice")
            const bob = yield* newUser("Bob")
            const { project } = yield* newProject("Gemini")
            const create = (yield* alice.call("POST", "/api/proposals", {
              projectId: project.id,
              type: "New task",
              proposedChangesObj: {
                action: "create_task",
                title: "Send the recap",
                priority: "p1",
                assignedTo: bob.email
              }
            })).json.proposal
            const accepted = yield* alice.call("POST", `/api/proposals/${create.id}/accept`)
            assert.strictEqual(accepted.status, 200)
            assert.deepInclude(accepted.json.task, {
              title: "Send the recap",
              priority: "P1: Top Priority",
              origin: "AI Agent",
              status: "Ready to Start",
              triageStatus: "New"
            })
            assert.strictEqual(accepted.json.task.assignedTo.id, bob.id)
            assert.deepStrictEqual(accepted.json.task.project, [project.id])
            assert.deepStrictEqual(
              (yield* bob.call("GET", "/api/tasks")).json.tasks.map((t: any) => t.id),
              [accepted.json.task.id]
            )
            const task = (yield* alice.call("POST", "/api/tasks", { title: "Finish" })).json.task
            yield* alice.call("POST", "/api/proposals", {
              taskId: task.id,
              type: "Due",
              proposedChangesObj: { action: "change_due_date", dueDate: "2026-12-01" }
            })
            assert.lengthOf((yield* alice.call("GET", "/api/proposals")).json.proposals, 1)
            yield* alice.call("PATCH", `/api/tasks/${task.id}`, { status: "Done" })
            assert.deepStrictEqual((yield* alice.call("GET", "/api/proposals")).json, { proposals: [] })
          })
      )

      it.effect("proposals: bad bodies are 400 with fields", () =>
        Effect.gen(function* () {
          const { newUser } = yield* fixture
          const alice = yield* newUser("Alice")
          const task = (yield* alice.call("POST", "/api/tasks", { title: "T" })).json.task
          const noTarget = yield* alice.call("POST", "/api/proposals", {
            type: "x",
            proposedChangesObj: { action: "create_task", title: "t" }
          })
          assert.strictEqual(noTarget.status, 400)
          assert.property(noTarget.json.fields, "taskId")
          const badAction = yield* alice.call("POST", "/api/proposals", {
            taskId: task.id,
            type: "x",
            proposedChangesObj: { action: "explode" }
          })
          assert.strictEqual(badAction.status, 400)
          assert.match(badAction.json.fields["proposedChangesObj.action"], /^Must be one of: create_task, /)
          const badValue = yield* alice.call("POST", "/api/proposals", {
            taskId: task.id,
            type: "x",
            proposedChangesObj: { action: "change_status", status: "Shipped" }
          })
          assert.deepStrictEqual(badValue.json, {
            error: "Validation failed",
            fields: { "proposedChangesObj.status": mustBeOneOf(Statuses) }
          })
          const needsTask = yield* alice.call("POST", "/api/proposals", {
            projectId: "recWhatever000000",
            type: "x",
            proposedChangesObj: { action: "reassign", assignedTo: alice.email }
          })
          assert.strictEqual(needsTask.status, 400)
          assert.property(needsTask.json.fields, "taskId")
          const noType = yield* alice.call("POST", "/api/proposals", {
            taskId: task.id,
            proposedChangesObj: { action: "archive_task" }
          })
          assert.strictEqual(noType.status, 400)
          assert.property(noType.json.fields, "type")
        })
      )

      it.effect("projects: search (min 2 chars, at most 10), mine, detail and update", () =>
        Effect.gen(function* () {
          const { newUser, newProject, create } = yield* fixture
          const alice = yield* newUser("Alice")
          const bob = yield* newUser("Bob")
          const tag = randomUUID().slice(0, 8)
          for (let i = 0; i < 12; i++) yield* create("projects", { name: `Search ${tag} ${i}` })
          const found = yield* alice.call("GET", `/api/projects?q=${tag.toUpperCase()}`)
          assert.strictEqual(found.status, 200)
          assert.lengthOf(found.json.projects, 10)
          assert.deepStrictEqual(Object.keys(found.json.projects[0]).sort(), ["id", "name"])
          const short = yield* alice.call("GET", "/api/projects?q=a")
          assert.deepStrictEqual(short.json, {
            error: "Validation failed",
            fields: { q: "Must be at least 2 characters" }
          })
          assert.strictEqual((yield* alice.call("GET", "/api/projects")).status, 400)

          const { client, project } = yield* newProject("Managed", alice.id)
          const mine = (yield* alice.call("GET", "/api/projects/mine")).json.projects
          assert.deepStrictEqual(
            mine.map((p: any) => p.id),
            [project.id]
          )
          assert.deepInclude(mine[0], { clientId: client.id, clientName: client.fields["name"] })
          assert.deepStrictEqual((yield* bob.call("GET", "/api/projects/mine")).json, { projects: [] })

          const open = (yield* alice.call("POST", "/api/tasks", { title: "Open", project: project.id })).json.task
          const done = (yield* alice.call("POST", "/api/tasks", { title: "Done", project: project.id })).json.task
          yield* alice.call("PATCH", `/api/tasks/${done.id}`, { status: "Done" })
          yield* bob.call("POST", "/api/tasks", { title: "Bob's own", project: project.id })
          const meeting = yield* create("meetings", {
            name: "Kickoff",
            startTime: isoDaysAgo(2),
            projects: [project.id]
          })
          const detail = (yield* alice.call("GET", `/api/projects/${project.id}`)).json
          assert.strictEqual(detail.project.id, project.id)
          assert.deepStrictEqual(
            detail.activeTasks.map((t: any) => t.id),
            [open.id]
          )
          assert.deepStrictEqual(
            detail.completedTasks.map((t: any) => t.id),
            [done.id]
          )
          assert.deepStrictEqual(
            detail.meetings.map((m: any) => m.id),
            [meeting.id]
          )
          assert.strictEqual((yield* alice.call("GET", "/api/projects/recNoSuchProject0")).status, 404)

          const updated = yield* alice.call("PATCH", `/api/projects/${project.id}`, {
            status: "On Hold",
            priority: "top",
            startDate: "2026-01-01",
            endDate: null,
            accountManager: bob.email
          })
          assert.strictEqual(updated.status, 200)
          assert.deepInclude(updated.json.project, {
            status: "On Hold",
            priority: "P1: Top Priority",
            startDate: "2026-01-01",
            endDate: null
          })
          assert.strictEqual(updated.json.project.accountManager.id, bob.id)
          const bad = yield* alice.call("PATCH", `/api/projects/${project.id}`, {
            priority: "whenever",
            endDate: "soon"
          })
          assert.deepStrictEqual(bad.json, {
            error: "Validation failed",
            fields: { priority: mustBeOneOf(Priorities), endDate: "Must be a date as YYYY-MM-DD" }
          })
          assert.strictEqual(
            (yield* alice.call("PATCH", `/api/projects/${project.id}`, { clientId: "recNoSuchClient00" })).status,
            400
          )
        })
      )

      it.effect("clients list and search (an empty query is an empty list); outcomes of a project", () =>
        Effect.gen(function* () {
          const { newUser, newProject, create } = yield* fixture
          const alice = yield* newUser("Alice")
          const { client, project } = yield* newProject("Vega")
          const all = (yield* alice.call("GET", "/api/clients")).json.clients
          assert.deepInclude(all, { id: client.id, name: client.fields["name"] })
          const name = String(client.fields["name"])
          const found = yield* alice.call(
            "GET",
            `/api/clients/search?q=${encodeURIComponent(name.slice(-6).toLowerCase())}`
          )
          assert.deepStrictEqual(found.json, { clients: [{ id: client.id, name }] })
          assert.deepStrictEqual((yield* alice.call("GET", "/api/clients/search?q=")).json, { clients: [] })
          assert.deepStrictEqual((yield* alice.call("GET", "/api/clients/search")).json, { clients: [] })
          const outcome = yield* create("outcomes", {
            name: "Launch",
            status: "On Track",
            description: "v1 live",
            project: [project.id]
          })
          const outcomes = yield* alice.call("GET", `/api/outcomes?projectId=${project.id}`)
          assert.deepStrictEqual(outcomes.json, {
            outcomes: [
              { id: outcome.id, name: "Launch", status: "On Track", description: "v1 live", projectId: project.id }
            ]
          })
          const missing = yield* alice.call("GET", "/api/outcomes")
          assert.deepStrictEqual(missing.json, { error: "Validation failed", fields: { projectId: "Required" } })
        })
      )

      it.effect(
        "meetings: recent ones the user attended or created by default, all, by client and dates; pending",
        () =>
          Effect.gen(function* () {
            const { newUser, newProject, create } = yield* fixture
            const alice = yield* newUser("Alice")
            const bob = yield* newUser("Bob")
            const { client, project } = yield* newProject("Lyra")
            const attended = yield* create("meetings", {
              name: "Lyra sync",
              startTime: isoDaysAgo(1),
              duration: 1800,
              linkLabel: "Recording",
              linkUrl: "https://meet.example.com/lyra",
              recordingType: "video",
              transcriptUrl: "https://meet.example.com/lyra/transcript",
              attendees: [alice.id, bob.id],
              projects: [project.id],
              clients: [client.id],
              summary: "We agreed on scope.",
              keyProgress: "Design done",
              decisionsMade: "Ship in May",
              nextActions: "Alice: draft plan",
              actionable: "- [ ] Alice: draft plan",
              deepMatchStatus: "Pending"
            })
            const bobs = yield* create("meetings", { name: "Bob alone", startTime: isoDaysAgo(2), createdBy: [bob.id] })
            const old = yield* create("meetings", { name: "Old", startTime: isoDaysAgo(60), attendees: [alice.id] })
            const ids = (answer: { json: any }) => answer.json.meetings.map((m: any) => m.id)
            const recent = yield* alice.call("GET", "/api/meetings/recent")
            assert.deepStrictEqual(recent.json.meetings, [
              {
                id: attended.id,
                name: "Lyra sync",
                startTime: attended.fields["startTime"],
                duration: 1800,
                link: { label: "Recording", url: "https://meet.example.com/lyra" },
                recordingType: "video",
                transcriptUrl: "https://meet.example.com/lyra/transcript",
                projects: [project.fields["name"]],
                clients: [client.fields["name"]],
                users: "Alice, Bob",
                summary: "We agreed on scope.",
                keyProgress: "Design done",
                decisionsMade: "Ship in May",
                nextActions: "Alice: draft plan",
                actionable: "- [ ] Alice: draft plan"
              }
            ])
            const everyone = ids(yield* alice.call("GET", "/api/meetings/recent?all=true"))
            assert.includeMembers(everyone, [attended.id, bobs.id])
            assert.notInclude(everyone, old.id)
            assert.deepStrictEqual(ids(yield* alice.call("GET", `/api/meetings/recent?all=true&client=${client.id}`)), [
              attended.id
            ])
            const byName = String(client.fields["name"]).slice(0, 8).toLowerCase()
            assert.deepStrictEqual(
              ids(yield* alice.call("GET", `/api/meetings/recent?client=${encodeURIComponent(byName)}`)),
              [attended.id]
            )
            const start = isoDaysAgo(90).slice(0, 10)
            const end = isoDaysAgo(30).slice(0, 10)
            assert.deepStrictEqual(ids(yield* alice.call("GET", `/api/meetings/recent?start=${start}&end=${end}`)), [
              old.id
            ])
            const badDate = yield* alice.call("GET", "/api/meetings/recent?start=yesterday")
            assert.strictEqual(badDate.status, 400)
            assert.property(badDate.json.fields, "start")
            assert.deepStrictEqual(ids(yield* alice.call("GET", "/api/meetings/pending")), [attended.id])
            assert.deepStrictEqual(ids(yield* bob.call("GET", "/api/meetings/pending")), [attended.id])
          })
      )

      it.effect("settings: defaults, partial update (nested or dotted keys), unknown values refused", () =>
        Effect.gen(function* () {
          const { newUser } = yield* fixture
          const alice = yield* newUser("Alice")
          const bob = yield* newUser("Bob")
          const defaults = { showSentNav: true, notifications: { channel: "email", frequency: "immediate" } }
          assert.deepStrictEqual((yield* alice.call("GET", "/api/settings")).json, { settings: defaults })
          const updated = yield* alice.call("PATCH", "/api/settings", {
            showSentNav: false,
            notifications: { channel: "Slack" }
          })
          assert.deepStrictEqual(updated.json, {
            settings: { showSentNav: false, notifications: { channel: "slack", frequency: "immediate" } }
          })
          const dotted = yield* alice.call("PATCH", "/api/settings", { "notifications.frequency": "daily" })
          assert.deepStrictEqual(dotted.json.settings.notifications, { channel: "slack", frequency: "daily" })
          assert.deepStrictEqual((yield* alice.call("GET", "/api/settings")).json, dotted.json)
          assert.deepStrictEqual((yield* bob.call("GET", "/api/settings")).json, { settings: defaults })
          const bad = yield* alice.call("PATCH", "/api/settings", {
            notifications: { channel: "pager", frequency: "hourly" }
          })
          assert.deepStrictEqual(bad.json, {
            error: "Validation failed",
            fields: {
              "notifications.channel": mustBeOneOf(["email", "slack", "none"]),
              "notifications.frequency": mustBeOneOf(["immediate", "daily", "weekly"])
            }
          })
          const wrongType = yield* alice.call("PATCH", "/api/settings", { showSentNav: "yes" })
          assert.strictEqual(wrongType.status, 400)
          assert.property(wrongType.json.fields, "showSentNav")
        })
      )

      it.effect("API keys: created with a name, shown once, listed without the secret, revoked for good", () =>
        Effect.gen(function* () {
          const { newUser, send } = yield* fixture
          const alice = yield* newUser("Alice")
          const bob = yield* newUser("Bob")
          const created = yield* alice.call("POST", "/api/settings/api-keys", { name: "laptop script" })
          assert.strictEqual(created.status, 201)
          const { apiKey, key } = created.json
          assert.match(key, /^tsk_[A-Za-z0-9_-]{43}$/)
          assert.deepInclude(apiKey, { name: "laptop script", keyPrefix: key.slice(0, 12), lastUsedAt: null })
          const listed = yield* alice.call("GET", "/api/settings/api-keys")
          assert.deepInclude(listed.json.apiKeys, apiKey)
          assert.notInclude(listed.text, key)
          const viaNewKey = yield* send("GET", "/api/tasks", { "x-api-key": key })
          assert.strictEqual(viaNewKey.status, 200)
          assert.strictEqual((yield* bob.call("DELETE", `/api/settings/api-keys/${apiKey.id}`)).status, 404)
          const revoked = yield* alice.call("DELETE", `/api/settings/api-keys/${apiKey.id}`)
          assert.deepStrictEqual(revoked.json, { ok: true })
          assert.strictEqual((yield* send("GET", "/api/tasks", { "x-api-key": key })).status, 401)
          assert.notDeepInclude((yield* alice.call("GET", "/api/settings/api-keys")).json.apiKeys, apiKey)
          assert.strictEqual((yield* alice.call("DELETE", `/api/settings/api-keys/${apiKey.id}`)).status, 404)
          const noName = yield* alice.call("POST", "/api/settings/api-keys", { name: "  " })
          assert.deepStrictEqual(noName.json, {
            error: "Validation failed",
            fields: { name: "Required, at most 100 characters" }
          })
        })
      )

      it.effect("unknown routes are 404 {error}; no answer leaks a stack trace, path or vendor", () =>
        Effect.gen(function* () {
          const { newUser, send } = yield* fixture
          const alice = yield* newUser("Alice")
          for (const answer of [
            yield* send("GET", "/nope", {}),
            yield* alice.call("GET", "/api/nothing-here"),
            yield* alice.call("POST", "/api/tasks", "{"),
            yield* alice.call("POST", "/api/tasks", { title: "\u0000" })
          ]) {
            assert.isAtLeast(answer.status, 400)
            assert.isString(answer.json.error)
            assert.notMatch(
              answer.text,
              /\bat\s+\S+\s+\(|node_modules|\/work\/|postgres|pglite|airtable|[A-Z]+_[A-Z]+_?[A-Z]*=/i
            )
          }
          assert.deepStrictEqual((yield* send("GET", "/nope", {})).json, { error: "Not found" })
        })
      )
    }))
}
