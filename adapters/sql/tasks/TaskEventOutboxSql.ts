import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { TaskEventOutbox, type TaskEvent } from "../../../core/tasks/EventOutbox.ts"

const EventRow = Schema.Struct({ event: Schema.Record(Schema.String, Schema.Unknown) })

/** The TaskEventOutbox port over `tasks.outbox` (0005_outbox.ts); ids are ULIDs, so id order is time order. */
export const TaskEventOutboxSql: Layer.Layer<TaskEventOutbox, never, SqlClient.SqlClient> = Layer.effect(
  TaskEventOutbox,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pendingRows = SqlSchema.findAll({
      Request: Schema.Int,
      Result: EventRow,
      execute: (limit) => sql`SELECT event FROM tasks.outbox WHERE delivered_at IS NULL ORDER BY id LIMIT ${limit}`
    })
    return TaskEventOutbox.of({
      enqueue: Effect.fn("TaskEventOutboxSql.enqueue")(function* (event: TaskEvent) {
        yield* sql`
          INSERT INTO tasks.outbox (id, event) VALUES (${event.id}, ${JSON.stringify(event)}::jsonb)
          ON CONFLICT (id) DO NOTHING`
      }, Effect.orDie),
      pending: Effect.fn("TaskEventOutboxSql.pending")(function* (limit: number) {
        return (yield* pendingRows(limit)).map((row) => row.event as unknown as TaskEvent)
      }, Effect.orDie)
    })
  })
)
