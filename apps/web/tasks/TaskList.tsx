import { createContext } from "preact"
import { useContext, useState } from "preact/hooks"
import { Callout, useId } from "../shared/components.tsx"
import { api, type BulkResult, type Task } from "./api.ts"
import { ProjectPicker } from "./ProjectPicker.tsx"
import { formatDate, priorityTone, Problem, shortPriority, useMutation } from "./ui.tsx"

/** The signed-in person's email: their own name is left out of "for ..." and "from ...". */
export const MeContext = createContext<string>("")

/** One line of a list: the title links to the task's page; its state in words beside it. */
const TaskRow = ({
  task,
  selectable,
  selected,
  toggle
}: {
  readonly task: Task
  readonly selectable: boolean
  readonly selected: boolean
  readonly toggle: () => void
}) => {
  const me = useContext(MeContext).toLowerCase()
  const other = (person: Task["assignedTo"]) =>
    person !== null && person.email.toLowerCase() !== me ? person.name : undefined
  const people = [
    other(task.assignedTo) !== undefined ? `for ${other(task.assignedTo)}` : undefined,
    other(task.requestedBy) !== undefined ? `from ${other(task.requestedBy)}` : undefined
  ].filter((part) => part !== undefined)
  return (
    <li class={selected ? "selected" : undefined}>
      {selectable ? (
        <input
          type="checkbox"
          class="select-task"
          checked={selected}
          onChange={toggle}
          aria-label={`Select ${task.title}`}
        />
      ) : null}
      <span class="item-text">
        <a class="item-title" href={`/tasks/${encodeURIComponent(task.id)}`}>
          {task.title}
        </a>
        <span class="item-subtitle">
          {[task.status, task.triageStatus !== "New" ? task.triageStatus : "Untriaged", task.projectName, ...people]
            .filter((part) => part !== "")
            .join(" · ")}
          {task.dueDate !== null ? ` · due ${formatDate(task.dueDate)}` : ""}
        </span>
      </span>
      <span class={`badge ${priorityTone(task.priority)}`} title={task.priority}>
        <span aria-hidden="true">{shortPriority(task.priority)}</span>
        <span class="visually-hidden">{task.priority}</span>
      </span>
    </li>
  )
}

type BulkAction = "accept" | "reject" | "done"

const doneMessage = (answer: BulkResult, action: BulkAction) => {
  const verb = action === "accept" ? "accepted" : action === "reject" ? "rejected" : "marked done"
  const changed = `${answer.successful.length} ${answer.successful.length === 1 ? "task" : "tasks"} ${verb}.`
  return answer.failedCount > 0 ? `${changed} ${answer.failedCount} could not be changed.` : changed
}

/** Accepting or rejecting applies only to tasks nobody has triaged yet (or that wait for information). */
const untriaged = (task: Task) => task.triageStatus === "New" || task.triageStatus === "Needs More Info"

/**
 * The actions on the tasks ticked in a list: Accept and Reject while every one of them is still to triage (on
 * the board, an accepted task is only marked done), Mark done always.
 */
const BulkBar = ({
  selected,
  triage,
  done
}: {
  readonly selected: ReadonlyArray<string>
  readonly triage: boolean
  readonly done: (message: string) => void
}) => {
  const [choice, setChoice] = useState<BulkAction | undefined>(undefined)
  const [projectId, setProjectId] = useState("")
  const [reason, setReason] = useState("")
  const mutation = useMutation()
  const reasonId = useId("bulk-reason")
  const submit = (action: BulkAction) =>
    void mutation.start(
      (key) =>
        api.bulk(key, {
          taskIds: selected,
          action,
          ...(action === "accept" ? { projectIds: [projectId] } : {}),
          ...(action === "reject" && reason.trim() !== "" ? { reason: reason.trim() } : {})
        }),
      (answer) => {
        setChoice(undefined)
        setReason("")
        done(doneMessage(answer, action))
      }
    )
  return (
    <section class="bulk-bar panel" aria-label="Selected tasks">
      <p class="bulk-count" role="status">
        {selected.length} selected
      </p>
      <div class="actions">
        {triage ? (
          <>
            <button type="button" aria-expanded={choice === "accept"} onClick={() => setChoice("accept")}>
              Accept selected
            </button>
            <button type="button" aria-expanded={choice === "reject"} onClick={() => setChoice("reject")}>
              Reject selected
            </button>
          </>
        ) : null}
        <button type="button" disabled={mutation.pending} onClick={() => submit("done")}>
          Mark selected done
        </button>
      </div>
      {triage && choice === "accept" ? (
        <form
          class="stack"
          onSubmit={(event) => {
            event.preventDefault()
            submit("accept")
          }}
        >
          <ProjectPicker value={projectId} onChange={setProjectId} />
          <button type="submit" class="primary" disabled={mutation.pending || projectId === ""}>
            Accept {selected.length} into the project
          </button>
        </form>
      ) : null}
      {triage && choice === "reject" ? (
        <form
          onSubmit={(event) => {
            event.preventDefault()
            submit("reject")
          }}
        >
          <div class="field">
            <label for={reasonId}>Reason (optional)</label>
            <input id={reasonId} value={reason} onInput={(event) => setReason(event.currentTarget.value)} />
          </div>
          <button type="submit" class="danger" disabled={mutation.pending}>
            Reject {selected.length}
          </button>
        </form>
      ) : null}
      <Problem error={mutation.error} retry={mutation.retry} />
    </section>
  )
}

/**
 * A list of tasks. With `bulk`, each row has a checkbox and the ticked ones can be accepted, rejected or marked
 * done together; the list reloads afterwards.
 */
export const TaskList = ({
  tasks,
  label,
  empty,
  bulk = false,
  changed
}: {
  readonly tasks: ReadonlyArray<Task>
  readonly label: string
  readonly empty: string
  readonly bulk?: boolean
  readonly changed?: () => void
}) => {
  const [selected, setSelected] = useState<ReadonlyArray<string>>([])
  const [message, setMessage] = useState<string | undefined>(undefined)
  const present = selected.filter((taskId) => tasks.some((task) => task.id === taskId))
  const all = tasks.length > 0 && present.length === tasks.length
  const toggle = (taskId: string) =>
    setSelected(present.includes(taskId) ? present.filter((x) => x !== taskId) : [...present, taskId])
  return (
    <div class="stack">
      {message !== undefined ? <Callout tone="success">{message}</Callout> : null}
      {tasks.length === 0 ? (
        <p class="muted">{empty}</p>
      ) : (
        <>
          {bulk ? (
            <label class="select-all">
              <input
                type="checkbox"
                checked={all}
                indeterminate={present.length > 0 && !all}
                onChange={() => setSelected(all ? [] : tasks.map((task) => task.id))}
              />
              Select all
            </label>
          ) : null}
          <ul class="item-list task-list" aria-label={label}>
            {tasks.map((task) => (
              <TaskRow
                key={task.id}
                task={task}
                selectable={bulk}
                selected={present.includes(task.id)}
                toggle={() => toggle(task.id)}
              />
            ))}
          </ul>
        </>
      )}
      {bulk && present.length > 0 ? (
        <BulkBar
          selected={present}
          triage={tasks.filter((task) => present.includes(task.id)).every(untriaged)}
          done={(text) => {
            setSelected([])
            setMessage(text)
            changed?.()
          }}
        />
      ) : null}
    </div>
  )
}
