import type { JSX } from "preact"
import { useRef, useState } from "preact/hooks"
import { useId, type Tone } from "../shared/components.tsx"
import { Markdown } from "../shared/Markdown.tsx"
import { safeHref } from "../shared/router.ts"
import { Chart } from "./Chart.tsx"
import { ActionRow, Form } from "./ActionBlocks.tsx"
import { arr, str } from "./BlockData.ts"
import type { Block } from "./types.ts"

/**
 * Renders a page's blocks. Block data comes from services: every field is checked for its type before use,
 * text is shown as text (markdown through the element-building renderer), links are followed only when
 * root-relative or http(s), and a block of an unknown type, or one missing what it needs, is skipped.
 */

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
