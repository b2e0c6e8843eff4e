/**
 * A browser's part of a sign-in, without a browser: a cookie jar and fetch with redirects followed by hand.
 * Cookies are kept per name and path as a browser keeps them for one host (every test service is on
 * 127.0.0.1, and cookies do not tell ports apart); Max-Age=0 or an expiry in the past removes one.
 */
export class Browser {
  /** `route` picks the server a request really goes to (a load balancer in front of several instances). */
  constructor(private readonly route: (url: URL) => URL = (url) => url) {}

  private readonly cookies = new Map<string, { readonly value: string; readonly path: string }>()
  /** Every URL requested, in order (redirects included). */
  readonly visited: Array<string> = []

  cookie(name: string): string | undefined {
    return [...this.cookies.entries()].find(([key]) => key.startsWith(`${name};`))?.[1].value
  }

  setCookie(name: string, value: string, path = "/"): void {
    this.cookies.set(`${name};${path}`, { value, path })
  }

  private header(url: URL): string {
    return [...this.cookies.entries()]
      .filter(
        ([, c]) => url.pathname === c.path || url.pathname.startsWith(c.path.endsWith("/") ? c.path : `${c.path}/`)
      )
      .map(([key, c]) => `${key.slice(0, key.indexOf(";"))}=${c.value}`)
      .join("; ")
  }

  private keep(url: URL, response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";").map((part) => part.trim())
      const at = pair!.indexOf("=")
      const name = pair!.slice(0, at)
      const value = pair!.slice(at + 1)
      let path = url.pathname.replace(/\/[^/]*$/, "") || "/"
      let gone = value === ""
      for (const attribute of attributes) {
        const [key, val = ""] = attribute.split("=")
        const k = key!.toLowerCase()
        if (k === "path") path = val
        if (k === "max-age" && Number(val) <= 0) gone = true
        if (k === "expires" && Date.parse(val) <= Date.now()) gone = true
      }
      if (gone) this.cookies.delete(`${name};${path}`)
      else this.cookies.set(`${name};${path}`, { value, path })
    }
  }

  /** One request with the jar's cookies; its Set-Cookie headers go into the jar. */
  async fetch(address: string, init: RequestInit = {}): Promise<Response> {
    const url = new URL(address)
    this.visited.push(url.toString())
    const headers = new Headers(init.headers)
    const cookie = this.header(url)
    if (cookie.length > 0) headers.set("cookie", cookie)
    const response = await fetch(this.route(url), { ...init, headers, redirect: "manual" })
    this.keep(url, response)
    return response
  }

  /** Requests `address`, then follows redirects (as GETs) until an answer that is not one. */
  async navigate(address: string, init: RequestInit = {}, maxRedirects = 20): Promise<Response> {
    let response = await this.fetch(address, init)
    let current = address
    for (let hops = 0; response.status >= 300 && response.status < 400; hops++) {
      if (hops >= maxRedirects) throw new Error(`too many redirects from ${address}`)
      const location = response.headers.get("location")
      if (location === null) return response
      await response.arrayBuffer()
      current = new URL(location, current).toString()
      response = await this.fetch(current)
    }
    return response
  }

  /** Follows redirects until the next one would leave for `stopAt` (an origin + path prefix); answers its URL. */
  async navigateUntil(address: string, stopAt: string, maxRedirects = 20): Promise<string> {
    let current = address
    for (let hops = 0; hops < maxRedirects; hops++) {
      const response = await this.fetch(current)
      await response.arrayBuffer()
      const location = response.headers.get("location")
      if (response.status < 300 || response.status >= 400 || location === null) {
        throw new Error(`${current} answered ${response.status} before reaching ${stopAt}`)
      }
      const target = new URL(location, current).toString()
      if (target.startsWith(stopAt)) return target
      current = target
    }
    throw new Error(`too many redirects from ${address}`)
  }
}
