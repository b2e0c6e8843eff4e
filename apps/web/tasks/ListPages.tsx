import { useEffect, useState } from "preact/hooks"
import { Loading, useId, useLoad } from "../shared/components.tsx"
import { navigate } from "../shared/router.ts"
import { api, type Task } from "./api.ts"
import { NewTask } from "./NewTask.tsx"
import { TaskList } from "./TaskList.tsx"
import { Problem } from "./ui.tsx"

const useTitle = (title: string) =>
  useEffect(() => {
    document.title = `${title} · Task inbox`
  }, [title])

const Loaded = ({
  loaded,
  label,
  empty,
  bulk
}: {
  readonly loaded: ReturnType<typeof useLoad<{ tasks: ReadonlyArray<Task> }>>
  readonly label: string
  readonly empty: string
  readonly bulk?: boolean
}) => (
  <>
    <Problem error={loaded.error} retry={loaded.reload} />
    {loaded.data === undefined ? (
      loaded.error === undefined ? (
        <Loading />
      ) : null
    ) : (
      <TaskList tasks={loaded.data.tasks} label={label} empty={empty} bulk={bulk ?? false} changed={loaded.reload} />
    )}
  </>
)

export const Inbox = () => {
  useTitle("Inbox")
  const loaded = useLoad("inbox", api.inbox)
  return (
    <div class="stack">
      <h1>Inbox</h1>
      <p class="muted">Tasks sent to you that nobody has triaged yet. Open one to accept, reject or hand it on.</p>
      <Loaded loaded={loaded} label="Untriaged tasks" empty="Nothing to triage: your inbox is empty." bulk />
    </div>
  )
}

export const Board = () => {
  useTitle("Board")
  const loaded = useLoad("board", api.board)
  return (
    <div class="stack">
      <h1>Board</h1>
      <p class="muted">Your active tasks; finished ones stay here for 30 days.</p>
      <Loaded loaded={loaded} label="Your active tasks" empty="No active tasks on your board." bulk />
    </div>
  )
}

export const Sent = () => {
  useTitle("Sent")
  const loaded = useLoad("sent", api.sent)
  return (
    <div class="stack">
      <h1>Sent</h1>
      <NewTask created={loaded.reload} />
      <h2>Tasks you asked others to do</h2>
      <Loaded loaded={loaded} label="Tasks you sent" empty="You have not sent anyone a task." />
    </div>
  )
}

export const Search = ({ search }: { readonly search: string }) => {
  useTitle("Search")
  const params = new URLSearchParams(search)
  const clientName = params.get("clientName") ?? ""
  const activeOnly = params.get("activeOnly") === "true"
  const [client, setClient] = useState(clientName)
  const [active, setActive] = useState(activeOnly)
  const clientId = useId("search-client")
  const activeId = useId("search-active")
  useEffect(() => {
    setClient(clientName)
    setActive(activeOnly)
  }, [search])
  const loaded = useLoad(`search?${clientName}&${activeOnly}`, (signal) =>
    api.search({ clientName, activeOnly }, signal)
  )
  return (
    <div class="stack">
      <h1>Search</h1>
      <form
        class="panel search-form"
        role="search"
        aria-label="Search your tasks"
        onSubmit={(event) => {
          event.preventDefault()
          const next = new URLSearchParams()
          if (client.trim() !== "") next.set("clientName", client.trim())
          if (active) next.set("activeOnly", "true")
          navigate(`/search${next.size > 0 ? `?${next}` : ""}`)
        }}
      >
        <div class="field">
          <label for={clientId}>Client name</label>
          <input id={clientId} value={client} onInput={(event) => setClient(event.currentTarget.value)} />
        </div>
        <label class="checkbox" for={activeId}>
          <input
            id={activeId}
            type="checkbox"
            checked={active}
            onChange={(event) => setActive(event.currentTarget.checked)}
          />
          Active tasks only
        </label>
        <button type="submit" class="primary">
          Search
        </button>
      </form>
      <Loaded loaded={loaded} label="Tasks found" empty="No task matches." />
    </div>
  )
}

const historyDays = [7, 30, 90, 365] as const

export const History = ({ search }: { readonly search: string }) => {
  useTitle("History")
  const asked = Number(new URLSearchParams(search).get("days") ?? "30")
  const days = historyDays.includes(asked as (typeof historyDays)[number]) ? asked : 30
  const daysId = useId("history-days")
  const loaded = useLoad(`history-${days}`, (signal) => api.history(days, signal))
  return (
    <div class="stack">
      <h1>History</h1>
      <div class="field inline-field">
        <label for={daysId}>Resolved in the last</label>
        <select
          id={daysId}
          value={String(days)}
          onChange={(event) => navigate(`/history?days=${event.currentTarget.value}`, { replace: true })}
        >
          {historyDays.map((n) => (
            <option key={n} value={String(n)}>
              {n} days
            </option>
          ))}
        </select>
      </div>
      <Loaded loaded={loaded} label="Resolved tasks" empty="Nothing resolved in that time." />
    </div>
  )
}
