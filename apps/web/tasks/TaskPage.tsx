import type { ComponentChildren } from "preact"
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks"
import { Callout, Field, Loading, useId, useLoad } from "../shared/components.tsx"
import { api, statuses, type Task } from "./api.ts"
import { ProjectPicker } from "./ProjectPicker.tsx"
import { formatDate, priorityTone, Problem, useMutation } from "./ui.tsx"

type Move = "accept" | "reject" | "needsInfo" | "archive" | "delegate"

const moves: ReadonlyArray<{ readonly move: Move; readonly label: string }> = [
  { move: "accept", label: "Accept" },
  { move: "reject", label: "Reject" },
  { move: "needsInfo", label: "Needs info" },
  { move: "archive", label: "Archive" },
  { move: "delegate", label: "Delegate" }
]

/**
 * The moves that make sense for a task as it is now: an untriaged task (or one waiting for information) all
 * of them; an accepted one is handed on or archived; a rejected one may still be accepted or archived; an
 * archived one none (only the record store brings it back).
 */
export const movesFor = (task: Task): ReadonlyArray<(typeof moves)[number]> => {
  if (task.isArchived) return []
  const allowed: ReadonlyArray<Move> =
    task.triageStatus === "Accepted"
      ? ["delegate", "archive"]
      : task.triageStatus === "Rejected"
        ? ["accept", "archive"]
        : ["accept", "reject", "needsInfo", "archive", "delegate"]
  return moves.filter((entry) => allowed.includes(entry.move))
}

/** The form of one triage move; `done` gets the task as the server changed it and what to tell the person. */
const MoveForm = ({
  task,
  move,
  done,
  cancel
}: {
  readonly task: Task
  readonly move: Move
  readonly done: (task: Task, message: string) => void
  readonly cancel: () => void
}) => {
  const mutation = useMutation()
  const [projectId, setProjectId] = useState(task.project[0] ?? "")
  const [status, setStatus] = useState<string>(
    task.status === "Done" || task.status === "Cancelled" ? "Ready to Start" : task.status
  )
  const [text, setText] = useState("")
  const [assignee, setAssignee] = useState("")
  const statusId = useId("accept-status")
  const form = useRef<HTMLFormElement>(null)
  // Opening a move takes the keyboard to its first field (Archive: to its confirmation), before the form is
  // painted, so nothing typed right away is lost.
  useLayoutEffect(() => {
    form.current?.querySelector<HTMLElement>("input, textarea, select, button")?.focus()
  }, [])

  const submit = (event: Event) => {
    event.preventDefault()
    const finish = (message: string) => (answer: { task: Task }) => done(answer.task, message)
    switch (move) {
      case "accept":
        return void mutation.start(
          (key) => api.accept(key, task.id, { projectId, status }),
          finish("Accepted: the task is on your board.")
        )
      case "reject":
        return void mutation.start((key) => api.reject(key, task.id, text.trim()), finish("Rejected."))
      case "needsInfo":
        return void mutation.start(
          (key) => api.needsInfo(key, task.id, text.trim()),
          finish("Asked for more information.")
        )
      case "archive":
        return void mutation.start((key) => api.archive(key, task.id), finish("Archived: it has left every list."))
      case "delegate":
        return void mutation.start(
          (key) => api.delegate(key, task.id, assignee.trim(), text.trim()),
          (answer) => done(answer.task, `Delegated to ${answer.task.assignedTo?.name ?? assignee.trim()}.`)
        )
    }
  }

  const label = moves.find((entry) => entry.move === move)!.label
  return (
    <form ref={form} class="panel stack move-form" id="triage-panel" aria-label={label} onSubmit={submit}>
      {move === "accept" ? (
        <>
          <ProjectPicker
            value={projectId}
            onChange={setProjectId}
            initial={task.project[0] !== undefined ? { id: task.project[0], name: task.projectName } : undefined}
          />
          <div class="field">
            <label for={statusId}>Status</label>
            <select id={statusId} value={status} onChange={(event) => setStatus(event.currentTarget.value)}>
              {statuses.map((value) => (
                <option key={value} value={value}>
                  {value}
                </option>
              ))}
            </select>
          </div>
        </>
      ) : null}
      {move === "reject" ? (
        <Field label="Reason" name="reason" type="textarea" required value={text} onInput={setText} />
      ) : null}
      {move === "needsInfo" ? (
        <Field
          label="What do you need to know?"
          name="note"
          type="textarea"
          required
          value={text}
          onInput={setText}
          hint="Kept in the task's triage notes."
        />
      ) : null}
      {move === "archive" ? (
        <p>Archiving takes the task out of every list. Only the record store can bring it back.</p>
      ) : null}
      {move === "delegate" ? (
        <>
          <Field
            label="Hand it to (email)"
            name="assignedTo"
            type="email"
            required
            value={assignee}
            onInput={setAssignee}
            hint="They are notified; the hand-off is kept in the triage notes."
          />
          <Field label="Reason (optional)" name="reason" value={text} onInput={setText} />
        </>
      ) : null}
      <Problem error={mutation.error} retry={mutation.retry} />
      <div class="actions">
        <button
          type="submit"
          class={move === "reject" || move === "archive" ? "danger" : "primary"}
          disabled={mutation.pending || (move === "accept" && projectId === "")}
        >
          {move === "accept"
            ? "Accept task"
            : move === "reject"
              ? "Reject task"
              : move === "needsInfo"
                ? "Ask for information"
                : move === "archive"
                  ? "Archive task"
                  : "Delegate task"}
        </button>
        <button type="button" onClick={cancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}

const Detail = ({ label, children }: { readonly label: string; readonly children: ComponentChildren }) => (
  <div>
    <dt>{label}</dt>
    <dd>{children}</dd>
  </div>
)

const ShortLink = ({ task }: { readonly task: Task }) => {
  const mutation = useMutation()
  const [url, setUrl] = useState<string | undefined>(undefined)
  const id = useId("short-link")
  return (
    <section class="stack" aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>Share</h2>
      {url !== undefined ? (
        <div class="field">
          <label for={id}>Short link</label>
          <input id={id} readOnly value={url} onFocus={(event) => event.currentTarget.select()} />
        </div>
      ) : (
        <p>
          <button
            type="button"
            disabled={mutation.pending}
            onClick={() =>
              void mutation.start(
                (key) => api.shortLink(key, task.id),
                (answer) => setUrl(answer.shortUrl)
              )
            }
          >
            Get a short link
          </button>
        </p>
      )}
      <Problem error={mutation.error} retry={mutation.retry} />
    </section>
  )
}

/** A task's page (where its links and short links land): what it is, and the triage moves. */
export const TaskPage = ({ taskId }: { readonly taskId: string }) => {
  const loaded = useLoad(`task-${taskId}`, (signal) => api.task(taskId, signal))
  const [task, setTask] = useState<Task | undefined>(undefined)
  const [open, setOpen] = useState<Move | undefined>(undefined)
  const [message, setMessage] = useState<string | undefined>(undefined)
  const buttons = useRef<Partial<Record<Move, HTMLButtonElement | null>>>({})
  /** Closes the open move; the keyboard goes back to its button. */
  const close = (move: Move) => {
    setOpen(undefined)
    buttons.current[move]?.focus()
  }
  useEffect(() => {
    setTask(loaded.data?.task)
  }, [loaded.data])
  useEffect(() => {
    setOpen(undefined)
    setMessage(undefined)
  }, [taskId])
  useEffect(() => {
    document.title = `${task?.title ?? "Task"} · Task inbox`
  }, [task?.title])

  if (task === undefined)
    return (
      <div class="stack">
        <h1>Task</h1>
        {loaded.error !== undefined ? <Problem error={loaded.error} retry={loaded.reload} /> : <Loading />}
      </div>
    )

  return (
    <article class="stack task-page">
      <header>
        <h1>{task.title}</h1>
        <p class="badges">
          <span class="badge">{task.status}</span>
          <span class="badge">{task.triageStatus === "New" ? "Untriaged" : task.triageStatus}</span>
          <span class={`badge ${priorityTone(task.priority)}`}>{task.priority}</span>
          {task.isArchived ? <span class="badge">Archived</span> : null}
        </p>
      </header>
      {message !== undefined ? <Callout tone="success">{message}</Callout> : null}
      <section class="stack" aria-labelledby="triage-heading">
        <h2 id="triage-heading">Triage</h2>
        {movesFor(task).length === 0 ? <p class="muted">Archived: no triage move applies.</p> : null}
        <div class="actions triage-actions">
          {movesFor(task).map(({ move, label }) => (
            <button
              key={move}
              ref={(element) => {
                buttons.current[move] = element
              }}
              type="button"
              class={open === move ? "primary" : undefined}
              aria-expanded={open === move}
              aria-controls={open === move ? "triage-panel" : undefined}
              onClick={() => {
                setMessage(undefined)
                setOpen(open === move ? undefined : move)
              }}
            >
              {label}
            </button>
          ))}
        </div>
        {open !== undefined ? (
          <MoveForm
            key={open}
            task={task}
            move={open}
            cancel={() => close(open)}
            done={(changed, text) => {
              setTask(changed)
              setMessage(text)
              close(open)
            }}
          />
        ) : null}
      </section>
      <section aria-labelledby="details-heading">
        <h2 id="details-heading">Details</h2>
        {task.description !== "" ? <p class="plain-text">{task.description}</p> : null}
        <dl class="details">
          <Detail label="Assigned to">{task.assignedTo?.name ?? "—"}</Detail>
          <Detail label="Requested by">{task.requestedBy?.name ?? "—"}</Detail>
          <Detail label="Project">
            {task.project[0] !== undefined ? (
              <a href={`/projects/${encodeURIComponent(task.project[0])}`}>{task.projectName || "Project"}</a>
            ) : (
              "—"
            )}
          </Detail>
          <Detail label="Due">{formatDate(task.dueDate)}</Detail>
          <Detail label="Starts">{formatDate(task.startDate)}</Detail>
          <Detail label="Hours">
            {task.hoursUsed ?? 0} used of {task.hoursEstimated ?? "—"} estimated
          </Detail>
          <Detail label="Origin">
            {task.origin}
            {task.originDetail !== "" ? ` (${task.originDetail})` : ""}
          </Detail>
          <Detail label="Created">{formatDate(task.createdAt)}</Detail>
        </dl>
        {task.triageNotes !== "" ? (
          <>
            <h3>Triage notes</h3>
            <p class="plain-text triage-notes">{task.triageNotes}</p>
          </>
        ) : null}
      </section>
      <ShortLink task={task} />
    </article>
  )
}
