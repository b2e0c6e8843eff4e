import { useEffect, useRef, useState } from "preact/hooks"
import { Field, messageOf, useId } from "../shared/components.tsx"
import { useAction } from "./Actions.tsx"
import { arr, str } from "./BlockData.ts"
import type { Block } from "./types.ts"

/** The blocks that act: a row of action buttons, and a form (see Blocks.tsx for how block data is read). */

const ActionFailure = ({ action }: { readonly action: ReturnType<typeof useAction> }) =>
  action.error === undefined ? null : (
    <div class="callout danger" role="alert">
      <p>{messageOf(action.error)}</p>
      <div class="actions">
        <button type="button" onClick={() => void action.retry()} disabled={action.pending}>
          Try again
        </button>
        <button type="button" class="link" onClick={action.dismiss}>
          Dismiss
        </button>
      </div>
    </div>
  )

const styles = new Set(["primary", "danger", "default"])

const ActionButton = ({ spec }: { readonly spec: Record<string, unknown> }) => {
  const action = useAction()
  const [confirming, setConfirming] = useState(false)
  const confirmButton = useRef<HTMLButtonElement>(null)
  const actionButton = useRef<HTMLButtonElement>(null)
  const asked = useRef(false)
  // The question takes the button's place: focus moves to its answer, and back to the button after it.
  useEffect(() => {
    if (confirming) confirmButton.current?.focus()
    else if (asked.current) actionButton.current?.focus()
    asked.current = confirming
  }, [confirming])
  const actionId = str(spec["actionId"])
  const label = str(spec["label"])
  const descriptionId = useId("action-description")
  if (actionId === undefined || label === undefined) return null
  const style = styles.has(str(spec["style"]) ?? "") ? str(spec["style"]) : "default"
  const description = str(spec["description"])
  const confirm = spec["confirm"]
  const confirmText = typeof confirm === "string" ? confirm : confirm === true ? `${label}: are you sure?` : undefined
  return (
    <div class="action">
      {confirming ? (
        <div class="callout warning" role="alertdialog" aria-label={`Confirm ${label}`}>
          <p>{confirmText}</p>
          <div class="actions">
            <button
              ref={confirmButton}
              type="button"
              class={style === "danger" ? "danger" : "primary"}
              disabled={action.pending}
              onClick={() => {
                setConfirming(false)
                void action.run(actionId)
              }}
            >
              {label}
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </div>
      ) : (
        <button
          ref={actionButton}
          type="button"
          class={style === "default" ? undefined : style}
          disabled={action.pending}
          aria-busy={action.pending}
          aria-describedby={description !== undefined ? descriptionId : undefined}
          onClick={() => (confirmText !== undefined ? setConfirming(true) : void action.run(actionId))}
        >
          {label}
        </button>
      )}
      {description !== undefined ? (
        <span id={descriptionId} class="muted small">
          {description}
        </span>
      ) : null}
      <ActionFailure action={action} />
    </div>
  )
}

export const ActionRow = ({ block }: { readonly block: Block }) => {
  const actions = arr(block["actions"])
  if (actions.length === 0) return null
  return (
    <div class="actions" role="group" aria-label={str(block["label"]) ?? "Actions"}>
      {actions.map((spec, n) => (
        <ActionButton key={`${str(spec["actionId"])}-${n}`} spec={spec} />
      ))}
    </div>
  )
}

const fieldTypes = new Set(["text", "textarea", "select", "email"])

export const Form = ({ block }: { readonly block: Block }) => {
  const fields = arr(block["fields"]).flatMap((field) => {
    const name = str(field["name"])
    if (name === undefined) return []
    const type = fieldTypes.has(str(field["type"]) ?? "")
      ? (field["type"] as "text" | "textarea" | "select" | "email")
      : "text"
    const options = Array.isArray(field["options"])
      ? (field["options"] as ReadonlyArray<unknown>).flatMap((option) => {
          if (typeof option === "string") return [{ value: option, label: option }]
          if (typeof option === "object" && option !== null) {
            const value = str((option as Record<string, unknown>)["value"])
            const label = str((option as Record<string, unknown>)["label"]) ?? value
            return value !== undefined ? [{ value, label: label! }] : []
          }
          return []
        })
      : []
    return [{ name, type, label: str(field["label"]) ?? name, required: field["required"] === true, options }]
  })
  const submit =
    typeof block["submit"] === "object" && block["submit"] !== null ? (block["submit"] as Record<string, unknown>) : {}
  const actionId = str(submit["actionId"])
  const initial = () =>
    Object.fromEntries(
      fields.map((field) => [
        field.name,
        field.type === "select" && field.required ? (field.options[0]?.value ?? "") : ""
      ])
    )
  const [values, setValues] = useState<Record<string, string>>(initial)
  const action = useAction()
  const form = useRef<HTMLFormElement>(null)
  if (actionId === undefined) return null
  const title = str(block["title"])
  return (
    <form
      ref={form}
      class="panel"
      aria-label={title ?? str(submit["label"]) ?? "Form"}
      onSubmit={(event) => {
        event.preventDefault()
        void action.run(actionId, values).then((done) => {
          if (done) setValues(initial())
        })
      }}
    >
      {title !== undefined ? <h2>{title}</h2> : null}
      {fields.map((field) => (
        <Field
          key={field.name}
          label={field.label}
          name={field.name}
          type={field.type}
          required={field.required}
          options={field.options}
          value={values[field.name] ?? ""}
          onInput={(value) => setValues((previous) => ({ ...previous, [field.name]: value }))}
        />
      ))}
      <button type="submit" class="primary" disabled={action.pending} aria-busy={action.pending}>
        {str(submit["label"]) ?? "Submit"}
      </button>
      <ActionFailure action={action} />
    </form>
  )
}
