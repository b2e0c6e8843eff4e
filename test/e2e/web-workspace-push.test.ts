import type { Browser, BrowserContext } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { contentSecurityPolicy } from "../../adapters/http/StaticApp.ts"
import { sign } from "../../core/auth/Signature.ts"
import { launchBrowser, phoneViewport, seriousViolations, watchCsp, watchPageErrors } from "../support/Chromium.ts"
import { newPushKeys, startPeer } from "../support/NotificationPeers.ts"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"
import { startSmtpServer, type SmtpTestServer } from "../support/SmtpServer.ts"
import { signInByEmailedLink } from "../support/EmailSignIn.ts"

/**
 * "Notify this browser" in the workspace, in Chromium against the bundled server. Headless Chromium reaches no
 * push service, so the page's `PushManager.prototype.subscribe` is replaced (before the app loads) by one that
 * checks it is given the hub's VAPID key and answers a subscription whose endpoint is a push service inside
 * the test, with real P-256 and auth keys made here: a notification filed for the person then arrives there
 * encrypted, and decrypts to its payload. The workspace's service worker shows a push as a notification.
 */

const adminKey = "hub-admin-key-for-the-browser-push-test"
const ada = "ada@acme.test"

let server: RunningServer
let smtp: SmtpTestServer
let pushService: Awaited<ReturnType<typeof startPeer>>
let browser: Browser

beforeAll(async () => {
  smtp = await startSmtpServer()
  pushService = await startPeer(201)
  server = await startServer({
    DATA_DIR: tempDataDir(),
    HUB_ADMIN_KEY: adminKey,
    SMTP_URL: smtp.url,
    SMTP_FROM: "Workspace <hub@acme.test>",
    HUB_WORKER_POLL_MS: "100"
  })
  browser = await launchBrowser()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop("SIGKILL")
  await smtp?.close()
  await pushService?.close()
})

const until = async <A>(what: string, attempt: () => Promise<A | undefined>, ms = 30_000): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await attempt()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const hub = () => `http://127.0.0.1:${server.ports.hub}`

const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${hub()}${path}`, {
    method,
    redirect: "manual",
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, json: text.length > 0 ? JSON.parse(text) : undefined, headers: response.headers }
}
const admin = (method: string, path: string, body?: unknown) =>
  call(method, path, body, { authorization: `Bearer ${adminKey}` })

/** Ada in the directory, signed in by her emailed link; answers her session cookie's value. */
const signIn = async () => {
  assert.strictEqual((await admin("POST", "/api/v1/admin/users", { email: ada, name: "Ada" })).status, 201)
  return signInByEmailedLink({ hubUrl: hub(), smtp, email: ada })
}

/** A third-party producer registered at the hub; `notify` files a notification for a person through it. */
const producer = async () => {
  const registered = await admin("POST", "/api/v1/admin/services", {
    id: "acmebot",
    displayName: "Acme bot",
    baseUrl: "https://acmebot.example"
  })
  assert.strictEqual(registered.status, 201)
  const signingKey = registered.json.data.credentials.signingKey as string
  const catalog = await admin("POST", "/api/v1/admin/event-catalog", {
    type: "acmebot.notification.created",
    producer: "acmebot",
    isNotification: true,
    dataSchema: {
      type: "object",
      required: ["title"],
      properties: { title: { type: "string" }, body: { type: "string" }, url: { type: "string" } }
    }
  })
  assert.strictEqual(catalog.status, 201)
  return async (email: string, id: string, data: Record<string, string>) => {
    const body = JSON.stringify({
      id,
      type: "acmebot.notification.created",
      service: "acmebot",
      occurredAt: new Date().toISOString(),
      subject: { email },
      data,
      contractVersion: "v1"
    })
    const timestamp = Math.floor(Date.now() / 1000)
    const response = await fetch(`${hub()}/api/webhooks/events`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-platform-signature": sign({ secret: signingKey, timestamp, payload: body }),
        "x-platform-timestamp": String(timestamp),
        "x-platform-event-id": id,
        "x-platform-delivery": `d_${id}`
      },
      body
    })
    assert.strictEqual(response.status, 202, await response.text())
  }
}

/**
 * Runs in the page before the app: `subscribe` refuses any key but the hub's and answers a subscription to
 * the test's push service; what it was called with is kept in `window.subscribeCalls`. (Browser code, kept as
 * text: the server's type check has no DOM.)
 */
const pushManagerStandIn = (given: {
  readonly hubKey: string
  readonly endpoint: string
  readonly keys: { readonly p256dh: string; readonly auth: string }
}) => `(() => {
  const given = ${JSON.stringify(given)}
  const base64url = (bytes) =>
    btoa(String.fromCharCode(...bytes)).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "")
  const calls = []
  window.subscribeCalls = calls
  let current = null
  PushManager.prototype.subscribe = async function (options) {
    const key = options?.applicationServerKey
    const text =
      typeof key === "string" ? key
      : key instanceof ArrayBuffer ? base64url(new Uint8Array(key))
      : key ? base64url(new Uint8Array(key.buffer, key.byteOffset, key.byteLength))
      : ""
    calls.push({ userVisibleOnly: options?.userVisibleOnly, key: text })
    if (text !== given.hubKey) throw new DOMException("not the application server's key", "InvalidAccessError")
    current = {
      endpoint: given.endpoint,
      expirationTime: null,
      options: { userVisibleOnly: true, applicationServerKey: null },
      getKey: () => null,
      toJSON: () => ({ endpoint: given.endpoint, expirationTime: null, keys: given.keys }),
      unsubscribe: async () => {
        current = null
        return true
      }
    }
    return current
  }
  PushManager.prototype.getSubscription = async function () {
    return current
  }
})()`

/**
 * Runs in the service worker: dispatches a push event carrying `data` and answers the notifications the
 * worker's handler showed. A dispatched event is not trusted, so its own waitUntil would refuse; the event's
 * waitUntil keeps what the handler waits on instead.
 */
const dispatchPush = (data: string) => `(async () => {
  const event = new PushEvent("push", { data: ${JSON.stringify(data)} })
  let handled = Promise.reject(new Error("the worker did not handle the push"))
  Object.defineProperty(event, "waitUntil", { value: (promise) => (handled = promise) })
  self.dispatchEvent(event)
  await handled
  const notifications = await self.registration.getNotifications()
  return notifications.map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data }))
})()`

const settingsPage = async (context: BrowserContext) => {
  const page = await context.newPage()
  const csp = watchCsp(page)
  const errors = watchPageErrors(page)
  const answer = await page.goto(`${hub()}/settings`)
  assert.strictEqual(answer?.headers()["content-security-policy"], contentSecurityPolicy)
  await page.getByRole("heading", { name: "Notification settings" }).waitFor()
  return { page, csp, errors }
}

describe("the workspace notifies this browser (Chromium, the bundled server, a push service inside the test)", () => {
  it("registers the service worker and the subscription with the hub's key; a notification arrives encrypted and is shown", async () => {
    const session = await signIn()
    const notify = await producer()
    const hubKey = (await call("GET", "/api/v1/me/push-key", undefined, { cookie: `hub_session=${session}` })).json.data
      .publicKey as string
    const browserKeys = newPushKeys()
    const endpoint = pushService.url("/push/ada-chromium")

    const context = await browser.newContext({ viewport: phoneViewport })
    await context.addCookies([{ name: "hub_session", value: session, url: hub() }])
    await context.grantPermissions(["notifications"], { origin: hub() })
    await context.addInitScript({ content: pushManagerStandIn({ hubKey, endpoint, keys: browserKeys.json }) })
    const { page, csp, errors } = await settingsPage(context)

    // Off at first; the browser channel is not among Ada's channels yet.
    await page.getByText("This browser does not show your notifications.").waitFor()
    assert.isFalse(await page.getByRole("checkbox", { name: /^Browser notifications/ }).isChecked())
    assert.deepStrictEqual(await seriousViolations(page), [])

    await page.getByRole("button", { name: "Notify this browser" }).click()
    await page.getByText("This browser shows your notifications.").waitFor()
    assert.deepStrictEqual(await page.evaluate("window.subscribeCalls"), [{ userVisibleOnly: true, key: hubKey }])
    // Turning this browser on turned the channel on, in the page and at the hub.
    assert.isTrue(await page.getByRole("checkbox", { name: /^Browser notifications/ }).isChecked())
    const preferences = await call("GET", "/api/v1/me/preferences", undefined, { cookie: `hub_session=${session}` })
    assert.include(preferences.json.data.channels, "push")
    await page.getByRole("button", { name: "Stop notifying this browser" }).waitFor()
    assert.deepStrictEqual(await seriousViolations(page), [])

    // The workspace's service worker is registered at the root, under the app's CSP.
    const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent("serviceworker"))
    assert.strictEqual(worker.url(), `${hub()}/sw.js`)
    const script = await fetch(`${hub()}/sw.js`)
    assert.strictEqual(script.status, 200)
    assert.match(script.headers.get("content-type") ?? "", /^text\/javascript/)
    assert.strictEqual(script.headers.get("content-security-policy"), contentSecurityPolicy)

    // A notification for Ada reaches the push service, encrypted for this browser's keys.
    await notify(ada, "01JD2Z3Q4R5S6T7V8W9X000001", {
      title: "Invoice 77 needs you",
      body: "Approve or reject it.",
      url: "/apps/acmebot/invoice-77"
    })
    const push = await until("the push", async () => pushService.to("/push/ada-chromium")[0])
    assert.match(String(push!.headers["authorization"]), new RegExp(`^vapid t=.+, k=${hubKey}$`))
    const payload = JSON.parse(browserKeys.decrypt(push!.body)) as Record<string, string>
    assert.deepInclude(payload, {
      service: "acmebot",
      title: "Invoice 77 needs you",
      body: "Approve or reject it.",
      url: `${hub()}/apps/acmebot/invoice-77`
    })

    // The service worker's push handler shows that payload as a notification (a push event dispatched in it).
    const shown = await worker.evaluate(dispatchPush(JSON.stringify(payload)))
    assert.deepStrictEqual(shown, [
      {
        title: "Invoice 77 needs you",
        body: "Approve or reject it.",
        tag: payload["id"]!,
        data: { url: "/apps/acmebot/invoice-77" }
      }
    ])

    // Off again: the hub forgets this browser and pushes there no more.
    await page.getByRole("button", { name: "Stop notifying this browser" }).click()
    await page.getByText("This browser does not show your notifications.").waitFor()
    const forgotten = await call(
      "DELETE",
      "/api/v1/me/push-subscriptions",
      { endpoint },
      {
        cookie: `hub_session=${session}`,
        origin: hub()
      }
    )
    assert.strictEqual(forgotten.status, 404)
    await notify(ada, "01JD2Z3Q4R5S6T7V8W9X000002", { title: "Invoice 78 needs you" })
    const log = await until("the second notification filed", async () => {
      const answer = await admin("GET", `/api/v1/admin/users/${encodeURIComponent(ada)}/notifications?limit=50`)
      const data = answer.json.data as { notifications: Array<{ title: string }>; deliveries: Array<unknown> }
      return data.notifications.some((n) => n.title === "Invoice 78 needs you") ? data : undefined
    })
    assert.lengthOf(
      (log.deliveries as Array<{ channel: string }>).filter((d) => d.channel === "push"),
      1,
      "only the first notification was pushed"
    )
    assert.lengthOf(pushService.to("/push/ada-chromium"), 1)

    assert.deepStrictEqual(csp, [], "CSP reports in the console")
    assert.deepStrictEqual(errors, [], "errors thrown in the page")
    await context.close()
  }, 120_000)
})
