import type { JSX } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"
import { Field, messageOf, useId, type Tone } from "../shared/components.tsx"
import { Markdown } from "../shared/Markdown.tsx"
import { safeHref } from "../shared/router.ts"
import { useAction } from "./Actions.tsx"
import { Chart } from "./Chart.tsx"
import type { Block } from "./types.ts"

/**
 * Renders a page's blocks. Block data comes from services: every field is checked for its type before use,
 * text is shown as text (markdown through the element-building renderer), links are followed only when
 * root-relative or http(s), and a block of an unknown type, or one missing what it needs, is skipped.
 */

const str = (value: unknown): string | undefined =>
  typeof value === "string" ? value : typeof value === "number" ? String(value) : undefined

const arr = (value: unknown): ReadonlyArray<Record<string, unknown>> =>
  Array.isArray(value)
    ? value.filter((item): item is Record<string, unknown> => typeof item === "object" && item !== null)
    : []

const Link = ({ href, children }: { readonly href: string; readonly children: JSX.Element | string }) =>
  href.startsWith("/") ? (
    <a href={href}>{children}</a>
  ) : (
    <a href={href} rel="noopener noreferrer nofollow" target="_blank">
      {children}
    </a>
  )

const Heading = ({ block }: { readonly block: Block }) => {
  const text = str(block["text"])
  if (text === undefined) return null
  const level = typeof block["level"] === "number" ? Math.min(6, Math.max(2, Math.round(block["level"]))) : 2
  const Tag = `h${level}` as "h2"
  return <Tag>{text}</Tag>
}

const Text = ({ block }: { readonly block: Block }) => {
  const text = str(block["text"])
  if (text === undefined) return null
  return block["format"] === "markdown" ? <Markdown text={text} /> : <p class="plain-text">{text}</p>
}

const Stat = ({ label, value }: { readonly label: string; readonly value: string }) => (
  <div class="stat">
    <dt>{label}</dt>
    <dd>{value}</dd>
  </div>
)

const Stats = ({ stats }: { readonly stats: ReadonlyArray<Record<string, unknown>> }) => {
  const shown = stats.flatMap((stat) => {
    const label = str(stat["label"])
    const value = str(stat["value"])
    return label !== undefined && value !== undefined ? [{ label, value }] : []
  })
  if (shown.length === 0) return null
  return (
    <dl class="stats">
      {shown.map((stat, n) => (
        <Stat key={n} {...stat} />
      ))}
    </dl>
  )
}

const List = ({ block }: { readonly block: Block }) => {
  const items = arr(block["items"]).filter((item) => str(item["title"]) !== undefined)
  if (items.length === 0) return <p class="muted">Nothing here yet.</p>
  return (
    <ul class="item-list">
      {items.map((item, n) => {
        const title = str(item["title"])!
        const href = safeHref(str(item["href"]))
        const subtitle = str(item["subtitle"])
        const badge = str(item["badge"])
        return (
          <li key={n}>
            <span class="item-text">
              <span class="item-title">{href !== undefined ? <Link href={href}>{title}</Link> : title}</span>
              {subtitle !== undefined ? <span class="item-subtitle">{subtitle}</span> : null}
            </span>
            {badge !== undefined ? <span class="badge">{badge}</span> : null}
          </li>
        )
      })}
    </ul>
  )
}

const Table = ({ block }: { readonly block: Block }) => {
  const columns = arr(block["columns"]).flatMap((column) => {
    const key = str(column["key"])
    return key !== undefined ? [{ key, label: str(column["label"]) ?? key }] : []
  })
  if (columns.length === 0) return null
  const rows = arr(block["rows"])
  const caption = str(block["title"]) ?? str(block["caption"])
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={caption ?? "Table"}>
      {/* Explicit roles keep the table's meaning when a phone-sized screen stacks its rows (base.css). */}
      <table role="table">
        {caption !== undefined ? <caption class="visually-hidden">{caption}</caption> : null}
        <thead>
          <tr role="row">
            {columns.map((column) => (
              <th key={column.key} scope="col" role="columnheader">
                {column.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, n) => {
            const href = safeHref(str(row["href"]))
            return (
              <tr key={n} role="row">
                {columns.map((column, c) => {
                  const cell = str(row[column.key]) ?? ""
                  return (
                    <td key={column.key} role="cell" data-label={column.label}>
                      {c === 0 && href !== undefined ? <Link href={href}>{cell || "Open"}</Link> : cell}
                    </td>
                  )
                })}
              </tr>
            )
          })}
        </tbody>
      </table>
      {rows.length === 0 ? <p class="muted small">No rows.</p> : null}
    </div>
  )
}

const tones = new Set(["info", "success", "warning", "danger"])

const CalloutBlock = ({ block }: { readonly block: Block }) => {
  const text = str(block["text"])
  if (text === undefined) return null
  const tone = (tones.has(str(block["tone"]) ?? "") ? block["tone"] : "info") as Tone
  return (
    <div class={`callout ${tone}`}>
      <p class="plain-text">{text}</p>
    </div>
  )
}

const Cards = ({ block }: { readonly block: Block }) => {
  const cards = arr(block["cards"]).filter((card) => str(card["title"]) !== undefined)
  if (cards.length === 0) return null
  return (
    <ul class="cards">
      {cards.map((card, n) => {
        const title = str(card["title"])!
        const href = safeHref(str(card["href"]))
        const text = str(card["text"])
        return (
          <li key={n} class="card">
            <h3>{href !== undefined ? <Link href={href}>{title}</Link> : title}</h3>
            {text !== undefined ? <p>{text}</p> : null}
          </li>
        )
      })}
    </ul>
  )
}

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

const ActionRow = ({ block }: { readonly block: Block }) => {
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

const Form = ({ block }: { readonly block: Block }) => {
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

const Tabs = ({ block, depth }: { readonly block: Block; readonly depth: number }) => {
  const tabs = arr(block["tabs"]).filter((tab) => str(tab["label"]) !== undefined)
  const [selected, setSelected] = useState(0)
  const buttons = useRef<Array<HTMLButtonElement | null>>([])
  const id = useId("tabs")
  if (tabs.length === 0) return null
  const current = Math.min(selected, tabs.length - 1)
  const move = (to: number) => {
    const next = (to + tabs.length) % tabs.length
    setSelected(next)
    buttons.current[next]?.focus()
  }
  return (
    <div>
      <div class="tablist" role="tablist" aria-label={str(block["label"]) ?? "Sections"}>
        {tabs.map((tab, n) => (
          <button
            key={n}
            ref={(element) => {
              buttons.current[n] = element
            }}
            type="button"
            role="tab"
            id={`${id}-tab-${n}`}
            aria-controls={`${id}-panel-${n}`}
            aria-selected={n === current}
            tabIndex={n === current ? 0 : -1}
            onClick={() => setSelected(n)}
            onKeyDown={(event) => {
              if (event.key === "ArrowRight") move(n + 1)
              else if (event.key === "ArrowLeft") move(n - 1)
              else if (event.key === "Home") move(0)
              else if (event.key === "End") move(tabs.length - 1)
              else return
              event.preventDefault()
            }}
          >
            {str(tab["label"])}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${id}-panel-${current}`} aria-labelledby={`${id}-tab-${current}`} tabIndex={0}>
        <Blocks blocks={arr(tabs[current]!["blocks"]) as ReadonlyArray<Block>} depth={depth + 1} />
      </div>
    </div>
  )
}

const renderBlock = (block: Block, depth: number): JSX.Element | null => {
  switch (block.type) {
    case "heading":
      return <Heading block={block} />
    case "text":
      return <Text block={block} />
    case "stat": {
      return <Stats stats={[block]} />
    }
    case "statGroup":
      return <Stats stats={arr(block["stats"])} />
    case "list":
      return <List block={block} />
    case "table":
      return <Table block={block} />
    case "form":
      return <Form block={block} />
    case "actionRow":
      return <ActionRow block={block} />
    case "callout":
      return <CalloutBlock block={block} />
    case "tabs":
      // Tabs inside tabs go no deeper than a few levels: a page cannot make the renderer recurse without end.
      return depth < 4 ? <Tabs block={block} depth={depth} /> : null
    case "cards":
      return <Cards block={block} />
    case "chart":
      return <Chart block={block} />
    default:
      return null
  }
}

export const Blocks = ({ blocks, depth = 0 }: { readonly blocks: ReadonlyArray<Block>; readonly depth?: number }) => (
  <div class="stack">
    {blocks.flatMap((block, n) => {
      if (typeof block !== "object" || block === null || typeof block.type !== "string") return []
      const element = renderBlock(block, depth)
      return element === null
        ? []
        : [
            <div key={`${block.type}-${n}`} class={`block block-${block.type}`}>
              {element}
            </div>
          ]
    })}
  </div>
)
