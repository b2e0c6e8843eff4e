import type { Link } from "../Decision.ts"

// Characters that would otherwise start markdown syntax inside a link label.
const special = /[\\`*_{}[\]()#+\-.!<>|~]/g

/** Text shown literally inside markdown: every character that markdown reads as syntax is escaped. */
export const escapeMarkdown = (text: string): string => text.replace(special, (c) => `\\${c}`)

/** A link target markdown cannot misread: an https URL, with parentheses, spaces and angle brackets encoded. */
const safeTarget = (url: string): string | undefined => {
  try {
    const parsed = new URL(url)
    if (parsed.protocol !== "https:") return undefined
    return parsed.href.replace(/[()<> ]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  } catch {
    return undefined
  }
}

/** A decision's links as a markdown list of https links; a link that is not https shows as text. */
export const markdownLinks = (links: ReadonlyArray<Link>): string =>
  links
    .map((link) => {
      const target = safeTarget(link.url)
      const label = escapeMarkdown(link.label.replace(/\s+/g, " "))
      return target === undefined ? `- ${label}` : `- [${label}](${target})`
    })
    .join("\n")
