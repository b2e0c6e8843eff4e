import type { ComponentChildren, JSX } from "preact"
import { safeHref } from "./router.ts"

/**
 * A small markdown renderer that builds elements, never HTML text: whatever a service or a caller wrote is
 * shown as text, so it cannot inject markup or script. Paragraphs, headings, lists, fenced code, quotes, and
 * inline strong, emphasis, code and links (root-relative or http(s) only; anything else stays text).
 */

type Inline = ComponentChildren

// Underscores mark emphasis only at word edges, so names such as snake_case_words stay as they are.
const inlinePattern =
  /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|((?<!\w)__[^_\n]+__(?!\w))|(\*[^*\n]+\*)|((?<!\w)_[^_\n]+_(?!\w))|(\[[^\]\n]+\]\([^)\s]+\))/

const renderInline = (text: string, key = 0): Array<Inline> => {
  const out: Array<Inline> = []
  let rest = text
  let index = key
  while (rest.length > 0) {
    const match = inlinePattern.exec(rest)
    if (match === null) {
      out.push(rest)
      break
    }
    if (match.index > 0) out.push(rest.slice(0, match.index))
    const token = match[0]
    index += 1
    if (token.startsWith("`")) out.push(<code key={index}>{token.slice(1, -1)}</code>)
    else if (token.startsWith("**") || token.startsWith("__"))
      out.push(<strong key={index}>{renderInline(token.slice(2, -2), index * 100)}</strong>)
    else if (token.startsWith("*") || token.startsWith("_"))
      out.push(<em key={index}>{renderInline(token.slice(1, -1), index * 100)}</em>)
    else {
      const link = /^\[([^\]]+)\]\(([^)\s]+)\)$/.exec(token)!
      const href = safeHref(link[2])
      if (href === undefined) out.push(link[1])
      else if (href.startsWith("/"))
        out.push(
          <a key={index} href={href}>
            {link[1]}
          </a>
        )
      else
        out.push(
          <a key={index} href={href} rel="noopener noreferrer nofollow" target="_blank">
            {link[1]}
          </a>
        )
    }
    rest = rest.slice(match.index + token.length)
  }
  return out
}

const listItem = /^\s*(?:[-*+]|(\d+)[.)])\s+(.*)$/

export const Markdown = ({ text }: { readonly text: string }): JSX.Element => {
  const lines = text.replace(/\r\n?/g, "\n").split("\n")
  const blocks: Array<JSX.Element> = []
  let i = 0
  while (i < lines.length) {
    const line = lines[i]!
    const key = blocks.length
    if (line.trim() === "") {
      i += 1
      continue
    }
    if (line.trimStart().startsWith("```")) {
      const code: Array<string> = []
      i += 1
      while (i < lines.length && !lines[i]!.trimStart().startsWith("```")) code.push(lines[i++]!)
      i += 1
      blocks.push(
        <pre key={key}>
          <code>{code.join("\n")}</code>
        </pre>
      )
      continue
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line)
    if (heading !== null) {
      // Headings inside a block sit below the page's own heading levels.
      const level = Math.min(6, heading[1]!.length + 2)
      const Tag = `h${level}` as "h3"
      blocks.push(<Tag key={key}>{renderInline(heading[2]!)}</Tag>)
      i += 1
      continue
    }
    if (line.startsWith(">")) {
      const quoted: Array<string> = []
      while (i < lines.length && lines[i]!.startsWith(">")) quoted.push(lines[i++]!.replace(/^>\s?/, ""))
      blocks.push(<blockquote key={key}>{renderInline(quoted.join(" "))}</blockquote>)
      continue
    }
    const first = listItem.exec(line)
    if (first !== null) {
      const ordered = first[1] !== undefined
      const items: Array<string> = []
      while (i < lines.length) {
        const item = listItem.exec(lines[i]!)
        if (item === null || (item[1] !== undefined) !== ordered) break
        items.push(item[2]!)
        i += 1
      }
      const children = items.map((item, n) => <li key={n}>{renderInline(item)}</li>)
      blocks.push(ordered ? <ol key={key}>{children}</ol> : <ul key={key}>{children}</ul>)
      continue
    }
    const paragraph: Array<string> = []
    while (
      i < lines.length &&
      lines[i]!.trim() !== "" &&
      !/^(#{1,6}\s|>|```)/.test(lines[i]!) &&
      listItem.exec(lines[i]!) === null
    )
      paragraph.push(lines[i++]!.trim())
    blocks.push(<p key={key}>{renderInline(paragraph.join(" "))}</p>)
  }
  return <div class="markdown">{blocks}</div>
}
