import { useEffect, useState } from "preact/hooks"
import { Loading, useId, useLoad } from "../shared/components.tsx"
import { safeHref } from "../shared/router.ts"
import { api, type Meeting, type ProjectItem } from "./api.ts"
import { TaskList } from "./TaskList.tsx"
import { formatDate, Problem } from "./ui.tsx"

const useTitle = (title: string) =>
  useEffect(() => {
    document.title = `${title} · Task inbox`
  }, [title])

const ProjectLinks = ({
  projects,
  label
}: {
  readonly projects: ReadonlyArray<ProjectItem>
  readonly label: string
}) => (
  <ul class="item-list" aria-label={label}>
    {projects.map((project) => (
      <li key={project.id}>
        <span class="item-text">
          <a class="item-title" href={`/projects/${encodeURIComponent(project.id)}`}>
            {project.name}
          </a>
          {"clientName" in project && typeof project.clientName === "string" && project.clientName !== "" ? (
            <span class="item-subtitle">{project.clientName}</span>
          ) : null}
        </span>
      </li>
    ))}
  </ul>
)

/** The projects the person manages, and a search over every project (two letters or more). */
export const Projects = () => {
  useTitle("Projects")
  const mine = useLoad("projects-mine", api.myProjects)
  const [query, setQuery] = useState("")
  const queryId = useId("project-query")
  const q = query.trim()
  const found = useLoad(`projects-${q}`, (signal) =>
    q.length < 2 ? Promise.resolve(undefined) : api.searchProjects(q, signal)
  )
  return (
    <div class="stack">
      <h1>Projects</h1>
      <div class="field" role="search">
        <label for={queryId}>Find a project</label>
        <span id={`${queryId}-hint`} class="muted small">
          At least two letters of its name.
        </span>
        <input
          id={queryId}
          type="search"
          value={query}
          aria-describedby={`${queryId}-hint`}
          onInput={(event) => setQuery(event.currentTarget.value)}
        />
      </div>
      {found.data !== undefined ? (
        <section class="stack" aria-labelledby="found-heading">
          <h2 id="found-heading">Found</h2>
          <Problem error={found.error} />
          {found.data.projects.length === 0 ? (
            <p class="muted">No project matches.</p>
          ) : (
            <ProjectLinks projects={found.data.projects} label="Projects found" />
          )}
        </section>
      ) : null}
      <section class="stack" aria-labelledby="mine-heading">
        <h2 id="mine-heading">Your projects</h2>
        <Problem error={mine.error} retry={mine.reload} />
        {mine.data === undefined ? (
          mine.error === undefined ? (
            <Loading />
          ) : null
        ) : mine.data.projects.length === 0 ? (
          <p class="muted">You do not manage any project.</p>
        ) : (
          <ProjectLinks projects={mine.data.projects} label="Your projects" />
        )}
      </section>
    </div>
  )
}

const duration = (seconds: number) => {
  const minutes = Math.round(seconds / 60)
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`
}

/** Meetings with their summaries and action items as plain text. */
export const MeetingList = ({
  meetings,
  label
}: {
  readonly meetings: ReadonlyArray<Meeting>
  readonly label: string
}) =>
  meetings.length === 0 ? (
    <p class="muted">No meetings.</p>
  ) : (
    <ul class="meeting-list" aria-label={label}>
      {meetings.map((meeting) => {
        const link = safeHref(meeting.link.url)
        const transcript = safeHref(meeting.transcriptUrl)
        return (
          <li key={meeting.id} class="card">
            <h3>{meeting.name}</h3>
            <p class="muted small">
              {formatDate(meeting.startTime)} · {duration(meeting.duration)}
              {meeting.clients.length > 0 ? ` · ${meeting.clients.join(", ")}` : ""}
              {meeting.projects.length > 0 ? ` · ${meeting.projects.join(", ")}` : ""}
            </p>
            {meeting.summary !== "" ? <p class="plain-text">{meeting.summary}</p> : null}
            {meeting.decisionsMade !== "" ? (
              <>
                <h4>Decisions</h4>
                <p class="plain-text">{meeting.decisionsMade}</p>
              </>
            ) : null}
            {meeting.nextActions !== "" ? (
              <>
                <h4>Next actions</h4>
                <p class="plain-text">{meeting.nextActions}</p>
              </>
            ) : null}
            {link !== undefined || transcript !== undefined ? (
              <p class="small">
                {link !== undefined ? (
                  <a href={link} target="_blank" rel="noopener noreferrer">
                    {meeting.link.label || "Recording"}
                  </a>
                ) : null}
                {link !== undefined && transcript !== undefined ? " · " : null}
                {transcript !== undefined ? (
                  <a href={transcript} target="_blank" rel="noopener noreferrer">
                    Transcript
                  </a>
                ) : null}
              </p>
            ) : null}
          </li>
        )
      })}
    </ul>
  )

/** One project: its facts, the person's active and completed tasks in it, and its meetings. */
export const ProjectPage = ({ projectId }: { readonly projectId: string }) => {
  const loaded = useLoad(`project-${projectId}`, (signal) => api.project(projectId, signal))
  useTitle(loaded.data?.project.name ?? "Project")
  if (loaded.data === undefined)
    return (
      <div class="stack">
        <h1>Project</h1>
        {loaded.error !== undefined ? <Problem error={loaded.error} retry={loaded.reload} /> : <Loading />}
      </div>
    )
  const { project, activeTasks, completedTasks, meetings } = loaded.data
  return (
    <div class="stack">
      <h1>{project.name}</h1>
      <dl class="details">
        <div>
          <dt>Client</dt>
          <dd>{project.clientName || "—"}</dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd>{project.status || "—"}</dd>
        </div>
        <div>
          <dt>Priority</dt>
          <dd>{project.priority || "—"}</dd>
        </div>
        <div>
          <dt>Dates</dt>
          <dd>
            {formatDate(project.startDate)} to {formatDate(project.endDate)}
          </dd>
        </div>
        <div>
          <dt>Account manager</dt>
          <dd>{project.accountManager?.name ?? "—"}</dd>
        </div>
      </dl>
      <h2>Active tasks</h2>
      <TaskList tasks={activeTasks} label="Active tasks" empty="No active tasks of yours here." />
      <h2>Completed tasks</h2>
      <TaskList tasks={completedTasks} label="Completed tasks" empty="No completed tasks of yours here." />
      <h2>Meetings</h2>
      <MeetingList meetings={meetings} label="Meetings of the project" />
    </div>
  )
}

/** Recent meetings (the person's, or everyone's), and those still waiting to be processed. */
export const Meetings = ({ search }: { readonly search: string }) => {
  useTitle("Meetings")
  const all = new URLSearchParams(search).get("all") === "true"
  const recent = useLoad(`meetings-${all}`, (signal) => api.recentMeetings(all, signal))
  const pending = useLoad("meetings-pending", api.pendingMeetings)
  return (
    <div class="stack">
      <h1>Meetings</h1>
      <nav aria-label="Which meetings" class="segmented">
        <a href="/meetings" aria-current={!all ? "page" : undefined}>
          Mine
        </a>
        <a href="/meetings?all=true" aria-current={all ? "page" : undefined}>
          Everyone's
        </a>
      </nav>
      <h2>Last 30 days</h2>
      <Problem error={recent.error} retry={recent.reload} />
      {recent.data !== undefined ? (
        <MeetingList meetings={recent.data.meetings} label="Recent meetings" />
      ) : recent.error === undefined ? (
        <Loading />
      ) : null}
      <h2>Waiting to be processed</h2>
      <Problem error={pending.error} retry={pending.reload} />
      {pending.data !== undefined ? (
        <MeetingList meetings={pending.data.meetings} label="Meetings waiting to be processed" />
      ) : pending.error === undefined ? (
        <Loading />
      ) : null}
    </div>
  )
}
