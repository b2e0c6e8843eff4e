import { Effect, Layer } from "effect"
import { TaskEventOutbox, type TaskEvent } from "../../../core/tasks/EventOutbox.ts"

export const TaskEventOutboxMemory = Layer.sync(TaskEventOutbox, () => {
  const events: Array<TaskEvent> = []
  return TaskEventOutbox.of({
    enqueue: (event) =>
      Effect.sync(() => {
        if (!events.some((e) => e.id === event.id)) events.push(structuredClone(event))
      }),
    pending: (limit) => Effect.sync(() => events.slice(0, limit).map((e) => structuredClone(e)))
  })
})
