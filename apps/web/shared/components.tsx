import type { ComponentChildren, JSX } from "preact"
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { ApiError } from "./api.ts"

export type Tone = "info" | "success" | "warning" | "danger"

/** A message box; warnings and errors are announced to screen readers as they appear. */
export const Callout = ({
  tone = "info",
  children
}: {
  readonly tone?: Tone
  readonly children: ComponentChildren
}) => (
  <div class={`callout ${tone}`} role={tone === "danger" || tone === "warning" ? "alert" : "status"}>
    {children}
  </div>
)

export const messageOf = (error: unknown): string =>
  error instanceof ApiError ? error.message : "Something went wrong. Please try again."

export const ErrorMessage = ({ error }: { readonly error: unknown }) =>
  error === undefined || error === null ? null : <Callout tone="danger">{messageOf(error)}</Callout>

let fieldIds = 0
/** A stable id for a label and its control. */
export const useId = (prefix: string) => {
  const id = useRef<string | undefined>(undefined)
  if (id.current === undefined) id.current = `${prefix}-${++fieldIds}`
  return id.current
}

export interface FieldProps {
  readonly label: string
  readonly name: string
  readonly type?: "text" | "textarea" | "select" | "email"
  readonly required?: boolean
  readonly options?: ReadonlyArray<{ readonly value: string; readonly label: string }>
  readonly value: string
  readonly onInput: (value: string) => void
  readonly autoComplete?: string
  readonly hint?: string
}

export const Field = (props: FieldProps): JSX.Element => {
  const id = useId(`field-${props.name}`)
  const hintId = props.hint !== undefined ? `${id}-hint` : undefined
  const common = {
    id,
    name: props.name,
    required: props.required === true,
    "aria-describedby": hintId
  }
  const onInput = (event: Event) => props.onInput((event.currentTarget as HTMLInputElement).value)
  return (
    <div class="field">
      <label for={id}>
        {props.label}
        {props.required === true ? <span aria-hidden="true"> *</span> : null}
      </label>
      {props.hint !== undefined ? (
        <span id={hintId} class="muted small">
          {props.hint}
        </span>
      ) : null}
      {props.type === "textarea" ? (
        <textarea {...common} value={props.value} onInput={onInput} />
      ) : props.type === "select" ? (
        <select {...common} value={props.value} onChange={onInput}>
          {props.required === true ? null : <option value="">—</option>}
          {(props.options ?? []).map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      ) : (
        <input
          {...common}
          type={props.type === "email" ? ("email" as const) : ("text" as const)}
          value={props.value}
          onInput={onInput}
          autoComplete={props.autoComplete}
          list={undefined}
        />
      )}
    </div>
  )
}

export interface Loaded<T> {
  readonly data: T | undefined
  readonly error: unknown
  readonly loading: boolean
  readonly reload: () => void
}

/** Loads with `load` whenever `key` changes; a newer load wins over an older one still on its way. */
export const useLoad = <T,>(key: string, load: (signal: AbortSignal) => Promise<T>): Loaded<T> => {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({
    data: undefined,
    error: undefined,
    loading: true
  })
  const [generation, setGeneration] = useState(0)
  const reload = useCallback(() => setGeneration((n) => n + 1), [])
  useEffect(() => {
    const controller = new AbortController()
    setState((previous) => ({ ...previous, loading: true }))
    load(controller.signal).then(
      (data) => {
        if (!controller.signal.aborted) setState({ data, error: undefined, loading: false })
      },
      (error: unknown) => {
        if (!controller.signal.aborted) setState((previous) => ({ ...previous, error, loading: false }))
      }
    )
    return () => controller.abort()
  }, [key, generation])
  return { ...state, reload }
}

export const Loading = ({ label = "Loading" }: { readonly label?: string }) => (
  <p class="muted" role="status">
    {label}…
  </p>
)
