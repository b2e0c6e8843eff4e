import { useState } from "preact/hooks"
import { Callout, Field } from "../shared/components.tsx"
import { api, priorities, type Task } from "./api.ts"
import { Problem, useMutation } from "./ui.tsx"

/** A new task for someone (or for oneself when no one is named): it lands in their inbox, untriaged. */
export const NewTask = ({ created }: { readonly created: () => void }) => {
  const [open, setOpen] = useState(false)
  const [title, setTitle] = useState("")
  const [description, setDescription] = useState("")
  const [assignedTo, setAssignedTo] = useState("")
  const [priority, setPriority] = useState<string>(priorities[2])
  const [last, setLast] = useState<Task | undefined>(undefined)
  const mutation = useMutation()
  return (
    <section class="stack" aria-label="New task">
      {last !== undefined ? (
        <Callout tone="success">
          Sent <a href={`/tasks/${encodeURIComponent(last.id)}`}>{last.title}</a>
          {last.assignedTo !== null ? ` to ${last.assignedTo.name}` : ""}.
        </Callout>
      ) : null}
      {open ? (
        <form
          class="panel"
          aria-label="New task"
          onSubmit={(event) => {
            event.preventDefault()
            void mutation.start(
              (key) =>
                api.create(key, {
                  title: title.trim(),
                  priority,
                  ...(description.trim() !== "" ? { description: description.trim() } : {}),
                  ...(assignedTo.trim() !== "" ? { assignedTo: assignedTo.trim() } : {})
                }),
              (answer) => {
                setLast(answer.task)
                setTitle("")
                setDescription("")
                setAssignedTo("")
                setOpen(false)
                created()
              }
            )
          }}
        >
          <h2>New task</h2>
          <Field label="Title" name="title" required value={title} onInput={setTitle} hint="At most 120 characters." />
          <Field
            label="Description"
            name="description"
            type="textarea"
            value={description}
            onInput={setDescription}
            hint="At most 500 characters."
          />
          <Field
            label="Assign to (email)"
            name="assignedTo"
            type="email"
            value={assignedTo}
            onInput={setAssignedTo}
            hint="Leave empty to assign it to yourself."
          />
          <Field
            label="Priority"
            name="priority"
            type="select"
            required
            value={priority}
            onInput={setPriority}
            options={priorities.map((value) => ({ value, label: value }))}
          />
          <Problem error={mutation.error} retry={mutation.retry} />
          <div class="actions">
            <button type="submit" class="primary" disabled={mutation.pending}>
              Send task
            </button>
            <button type="button" onClick={() => setOpen(false)}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <p>
          <button type="button" class="primary" onClick={() => setOpen(true)}>
            New task
          </button>
        </p>
      )}
    </section>
  )
}
