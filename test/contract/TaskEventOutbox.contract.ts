import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { monotonicFactory } from "ulid"
import { TaskEventOutbox, type TaskEvent } from "../../core/tasks/EventOutbox.ts"

const nextId = monotonicFactory()

const eventFor = (email: string): TaskEvent => ({
  id: nextId(),
  type: "tasks.notification.created",
  service: "tasks",
  occurredAt: "2030-01-01T10:00:00.000Z",
  subject: { email },
  data: { kind: "task_delegated", title: `Zoë's "task" ✓`, nested: { list: [1, null] } },
  contractVersion: "v1"
})

/** The TaskEventOutbox port's contract (core/tasks/EventOutbox.ts), run once per adapter. */
export const TaskEventOutboxContract = (name: string, store: Layer.Layer<TaskEventOutbox, unknown>) =>
  describe(`TaskEventOutbox contract (${name})`, () =>
    layer(store, { excludeTestServices: true })((it) => {
      it.effect("keeps events as given, oldest first, each id once", () =>
        Effect.gen(function* () {
          const outbox = yield* TaskEventOutbox
          const first = eventFor("a@example.com")
          const second = eventFor("b@example.com")
          yield* outbox.enqueue(first)
          yield* outbox.enqueue(second)
          yield* outbox.enqueue({ ...first, subject: { email: "changed@example.com" } })
          assert.deepStrictEqual(yield* outbox.pending(10), [first, second])
          assert.deepStrictEqual(yield* outbox.pending(1), [first])
        })
      )
    }))
