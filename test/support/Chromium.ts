import type { AxeResults } from "axe-core"
import { mkdirSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { chromium, type Browser, type Page } from "playwright-core"

/** Debian's Chromium, headless, without anything that reaches the network on its own. */
export const launchBrowser = (): Promise<Browser> =>
  chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })

/** A phone-sized page (375 px wide), the narrowest screen the apps are made for. */
export const phoneViewport = { width: 375, height: 812 }

/**
 * What the page's console said about its Content-Security-Policy: every refused script, style, image,
 * connection or frame is reported there. Collected from the moment this is called.
 */
export const watchCsp = (page: Page) => {
  const violations: Array<string> = []
  page.on("console", (message) => {
    if (/Content[- ]Security[- ]Policy/i.test(message.text())) violations.push(message.text())
  })
  return violations
}

/** Errors thrown in the page (uncaught). */
export const watchPageErrors = (page: Page) => {
  const errors: Array<string> = []
  page.on("pageerror", (error) => errors.push(error.message))
  return errors
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

/**
 * Runs axe-core on the page as it is and answers its serious and critical violations (rule, and the first
 * elements they concern). The script is evaluated by the browser's debugging protocol, not added as a script
 * element, so the page's strict CSP stays in force for the page's own scripts.
 */
export const seriousViolations = async (page: Page) => {
  await page.evaluate(axeSource)
  const results = (await page.evaluate("axe.run(document)")) as AxeResults
  return results.violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => ({
      rule: violation.id,
      impact: violation.impact,
      help: violation.help,
      nodes: violation.nodes.slice(0, 3).map((node) => node.html)
    }))
}

/**
 * Where screenshots go: docs/screenshots/ when SCREENSHOTS=1 (to refresh the committed ones shown in
 * docs/web-apps.md), else a temporary directory, so an ordinary test run leaves the checkout unchanged.
 */
export const screenshotDirectory = () => {
  const directory =
    process.env["SCREENSHOTS"] === "1" ? join(process.cwd(), "docs", "screenshots") : join(tmpdir(), "hitl-screenshots")
  mkdirSync(directory, { recursive: true })
  return directory
}
