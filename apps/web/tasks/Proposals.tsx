import { useEffect, useState } from "preact/hooks"
import { Callout, Loading, useId, useLoad } from "../shared/components.tsx"
import { safeHref } from "../shared/router.ts"
import { api, type Proposal } from "./api.ts"
import { formatDate, Problem, useMutation } from "./ui.tsx"

const actionLabels: Readonly<Record<string, string>> = {
  create_task: "Create a task",
  change_status: "Change the status",
  change_priority: "Change the priority",
  reassign: "Reassign",
  change_due_date: "Change the due date",
  change_start_date: "Change the start date",
  change_description: "Change the description",
  change_title: "Change the title",
  change_estimate: "Change the estimate",
  archive_task: "Archive the task"
}

const words = (key: string) => key.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase()

const show = (value: unknown) => (value === null ? "none" : typeof value === "string" ? value : JSON.stringify(value))

/** One open proposal: what would change, where it came from, and Accept or Reject. */
const ProposalCard = ({
  proposal,
  resolved
}: {
  readonly proposal: Proposal
  readonly resolved: (text: string) => void
}) => {
  const headingId = useId("proposal")
  const reasonId = useId("proposal-reason")
  const mutation = useMutation()
  const [rejecting, setRejecting] = useState(false)
  const [reason, setReason] = useState("")
  const action = typeof proposal.proposedChangesObj["action"] === "string" ? proposal.proposedChangesObj["action"] : ""
  const changes = Object.entries(proposal.proposedChangesObj).filter(([key]) => key !== "action")
  const meetingUrl = safeHref(proposal.meetingData?.url)
  return (
    <li class="card proposal" aria-labelledby={headingId}>
      <h2 id={headingId}>{proposal.name}</h2>
      <p class="muted small">
        {actionLabels[action] ?? (action || proposal.type)}
        {proposal.taskTitle !== undefined && proposal.taskId !== undefined ? (
          <>
            {" of "}
            <a href={`/tasks/${encodeURIComponent(proposal.taskId)}`}>{proposal.taskTitle}</a>
          </>
        ) : null}
        {proposal.projectData !== undefined ? (
          <>
            {" in "}
            <a href={`/projects/${encodeURIComponent(proposal.projectData.id)}`}>{proposal.projectData.name}</a>
          </>
        ) : null}
      </p>
      {changes.length > 0 ? (
        <dl class="details compact">
          {changes.map(([key, value]) => (
            <div key={key}>
              <dt>{words(key)}</dt>
              <dd>{show(value)}</dd>
            </div>
          ))}
        </dl>
      ) : null}
      {proposal.meetingData !== undefined ? (
        <p class="small">
          From{" "}
          {meetingUrl !== undefined ? (
            <a href={meetingUrl} target="_blank" rel="noopener noreferrer">
              {proposal.meetingData.title}
            </a>
          ) : (
            proposal.meetingData.title
          )}
          {proposal.meetingData.date !== "" ? `, ${formatDate(proposal.meetingData.date)}` : ""}
          {proposal.meetingData.authorName !== "" ? `, noted by ${proposal.meetingData.authorName}` : ""}
        </p>
      ) : null}
      <div class="actions">
        <button
          type="button"
          class="primary"
          aria-describedby={headingId}
          disabled={mutation.pending}
          onClick={() =>
            void mutation.start(
              (key) => api.acceptProposal(key, proposal.id),
              (answer) => resolved(`Accepted “${proposal.name}”: ${answer.task.title} is updated.`)
            )
          }
        >
          Accept
        </button>
        <button
          type="button"
          aria-describedby={headingId}
          aria-expanded={rejecting}
          disabled={mutation.pending}
          onClick={() => setRejecting(!rejecting)}
        >
          Reject
        </button>
      </div>
      {rejecting ? (
        <form
          onSubmit={(event) => {
            event.preventDefault()
            void mutation.start(
              (key) => api.rejectProposal(key, proposal.id, reason.trim()),
              () => resolved(`Rejected “${proposal.name}”.`)
            )
          }}
        >
          <div class="field">
            <label for={reasonId}>Why not?</label>
            <input id={reasonId} value={reason} onInput={(event) => setReason(event.currentTarget.value)} />
          </div>
          <button type="submit" class="danger" disabled={mutation.pending}>
            Reject proposal
          </button>
        </form>
      ) : null}
      <Problem error={mutation.error} retry={mutation.retry} />
    </li>
  )
}

/** The open proposals from meeting debriefs that the person owns. */
export const Proposals = () => {
  useEffect(() => {
    document.title = "Proposals · Task inbox"
  }, [])
  const loaded = useLoad("proposals", api.proposals)
  const [message, setMessage] = useState<string | undefined>(undefined)
  return (
    <div class="stack">
      <h1>Proposals</h1>
      <p class="muted">Changes suggested from meeting debriefs. Accepting one applies it; rejecting dismisses it.</p>
      {message !== undefined ? <Callout tone="success">{message}</Callout> : null}
      <Problem error={loaded.error} retry={loaded.reload} />
      {loaded.data === undefined ? (
        loaded.error === undefined ? (
          <Loading />
        ) : null
      ) : loaded.data.proposals.length === 0 ? (
        <p class="muted">No open proposals.</p>
      ) : (
        <ul class="cards proposals" aria-label="Open proposals">
          {loaded.data.proposals.map((proposal) => (
            <ProposalCard
              key={proposal.id}
              proposal={proposal}
              resolved={(text) => {
                setMessage(text)
                loaded.reload()
              }}
            />
          ))}
        </ul>
      )}
    </div>
  )
}
