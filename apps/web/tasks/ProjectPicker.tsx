import { useEffect, useState } from "preact/hooks"
import { useId } from "../shared/components.tsx"
import { api, type ProjectItem } from "./api.ts"
import { Problem } from "./ui.tsx"

/**
 * Choosing a project: the person's own projects first, then what a search of two letters or more finds (at
 * most ten). A plain radio group, so it works with the keyboard and reads well to a screen reader.
 */
export const ProjectPicker = ({
  value,
  onChange,
  initial
}: {
  readonly value: string
  readonly onChange: (projectId: string) => void
  readonly initial?: ProjectItem | undefined
}) => {
  const id = useId("project")
  const [query, setQuery] = useState("")
  const [found, setFound] = useState<ReadonlyArray<ProjectItem> | undefined>(undefined)
  const [mine, setMine] = useState<ReadonlyArray<ProjectItem>>([])
  const [error, setError] = useState<unknown>(undefined)

  useEffect(() => {
    const controller = new AbortController()
    api.myProjects(controller.signal).then(
      (answer) => setMine(answer.projects),
      (failure: unknown) => {
        if (!controller.signal.aborted) setError(failure)
      }
    )
    return () => controller.abort()
  }, [])

  useEffect(() => {
    const q = query.trim()
    if (q.length < 2) {
      setFound(undefined)
      return
    }
    const controller = new AbortController()
    api.searchProjects(q, controller.signal).then(
      (answer) => {
        setError(undefined)
        setFound(answer.projects)
      },
      (failure: unknown) => {
        if (!controller.signal.aborted) setError(failure)
      }
    )
    return () => controller.abort()
  }, [query])

  const seen = new Set<string>()
  const choices = [...(initial !== undefined ? [initial] : []), ...(found ?? mine)].filter((project) => {
    if (seen.has(project.id)) return false
    seen.add(project.id)
    return true
  })

  return (
    <fieldset class="project-picker">
      <legend>Project</legend>
      <div class="field">
        <label for={`${id}-search`}>Find a project</label>
        <span id={`${id}-hint`} class="muted small">
          Type at least two letters of its name; your own projects are listed until then.
        </span>
        <input
          id={`${id}-search`}
          type="search"
          value={query}
          aria-describedby={`${id}-hint`}
          onInput={(event) => setQuery(event.currentTarget.value)}
        />
      </div>
      <Problem error={error} />
      {choices.length === 0 ? (
        <p class="muted small" role="status">
          {found !== undefined ? "No project matches." : "No projects to choose from yet: search for one."}
        </p>
      ) : (
        <div class="choices">
          {choices.map((project) => (
            <label key={project.id} class="choice">
              <input
                type="radio"
                name={`${id}-choice`}
                value={project.id}
                checked={value === project.id}
                onChange={() => onChange(project.id)}
              />
              <span>{project.name}</span>
            </label>
          ))}
        </div>
      )}
    </fieldset>
  )
}
