import { Context, type Effect } from "effect"

/**
 * An event for the hub, shaped as document 1's InboundEvent: `id` (a ULID, the hub's dedupe key), `type` from
 * the catalog, the producer `service`, the `subject` it concerns, and `data`.
 */
export interface TaskEvent {
  readonly id: string
  readonly type: "tasks.notification.created"
  readonly service: "tasks"
  readonly occurredAt: string
  readonly subject: { readonly email: string }
  readonly data: Readonly<Record<string, unknown>>
  readonly contractVersion: "v1"
}

/**
 * The task inbox's outbox of events for the hub (document 1, "Events" 5: producers persist events and
 * deliver them with retries until acknowledged). This issue fills it; the relay to the hub comes with the
 * hub's event ingest. Infrastructure failures are defects.
 */
export class TaskEventOutbox extends Context.Service<
  TaskEventOutbox,
  {
    readonly enqueue: (event: TaskEvent) => Effect.Effect<void>
    /** Events not yet delivered, oldest first. */
    readonly pending: (limit: number) => Effect.Effect<ReadonlyArray<TaskEvent>>
  }
>()("core/tasks/TaskEventOutbox") {}
