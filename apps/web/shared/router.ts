import { useEffect, useState } from "preact/hooks"

/**
 * A tiny history router: the current path and query, `navigate` to move (pushState), and links inside the app
 * that move without a reload (see `interceptLinks`). Paths are root-relative on the app's own origin.
 */
const listeners = new Set<() => void>()

const notify = () => {
  for (const listener of listeners) listener()
}

export const navigate = (to: string, options: { readonly replace?: boolean } = {}) => {
  const url = new URL(to, window.location.href)
  if (url.origin !== window.location.origin) {
    window.location.assign(url.href)
    return
  }
  if (options.replace === true) window.history.replaceState(null, "", url.pathname + url.search + url.hash)
  else window.history.pushState(null, "", url.pathname + url.search + url.hash)
  notify()
  window.scrollTo(0, 0)
}

export interface Location {
  readonly path: string
  readonly search: string
}

const current = (): Location => ({ path: window.location.pathname, search: window.location.search })

export const useLocation = (): Location => {
  const [location, setLocation] = useState(current)
  useEffect(() => {
    const update = () => setLocation(current())
    listeners.add(update)
    window.addEventListener("popstate", update)
    return () => {
      listeners.delete(update)
      window.removeEventListener("popstate", update)
    }
  }, [])
  return location
}

/** Same-origin clicks on plain links move inside the app; modified clicks, downloads and new tabs are left alone. */
export const interceptLinks = (root: HTMLElement) => {
  root.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0) return
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    const anchor = (event.target as Element | null)?.closest?.("a")
    if (anchor === null || anchor === undefined) return
    if (anchor.target !== "" || anchor.hasAttribute("download") || anchor.dataset["reload"] !== undefined) return
    const url = new URL(anchor.href, window.location.href)
    if (url.origin !== window.location.origin) return
    if (/^\/(api|auth|\.well-known)(\/|$)/.test(url.pathname)) return
    event.preventDefault()
    navigate(url.pathname + url.search + url.hash)
  })
}

/** Only root-relative paths of this origin are followed from server data (never `javascript:` or another site). */
export const safeHref = (href: string | undefined | null): string | undefined => {
  if (typeof href !== "string") return undefined
  if (/^\/(?!\/)/.test(href) && !href.includes("\\")) return href
  try {
    const url = new URL(href)
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : undefined
  } catch {
    return undefined
  }
}
