import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { request as httpRequest } from "node:http"
import { sign } from "../../core/auth/Signature.ts"
import { noContextKeys } from "../../core/hub/ContextKeys.ts"
import { sqlBackends, type SqlBackend } from "../support/Databases.ts"
import { request } from "../support/Http.ts"
import {
  offsetClock,
  recapsContextKey,
  serveSignIn,
  tasksContextKey,
  type SignInStackOptions
} from "../support/HubSignIn.ts"
import { startSmtpServer, type SmtpTestServer } from "../support/SmtpServer.ts"
import { signInLinkIn } from "../support/EmailSignIn.ts"

const smtpServer = Effect.acquireRelease(
  Effect.promise(() => startSmtpServer()),
  (smtp) => Effect.promise(() => smtp.close())
)

/** A scoped test with an SMTP server, a hub sign-in stack on it, and a clock the test can move on. */
const withHub = <A, E>(
  backend: SqlBackend | undefined,
  options: Omit<SignInStackOptions, "smtp" | "backend">,
  body: (hub: {
    readonly baseUrl: string
    readonly smtp: SmtpTestServer
    readonly advance: (millis: number) => void
    readonly addUser: (email: string, name: string) => Effect.Effect<string>
    readonly pendingMail: Effect.Effect<number>
    /** Waits until every request for a link was handled and every email queued was sent. */
    readonly settled: Effect.Effect<void>
  }) => Effect.Effect<A, E>
) => {
  const time = offsetClock()
  return Effect.scoped(
    Effect.gen(function* () {
      const smtp = yield* smtpServer
      const stack = yield* serveSignIn({ ...options, smtp, backend })
      return yield* body({
        baseUrl: stack.baseUrl,
        smtp,
        advance: time.advance,
        addUser: (email, name) =>
          Effect.gen(function* () {
            const id = `usr_${email.replace(/[^a-z]/g, "")}_${Date.now()}`
            yield* stack.directory.createUser({
              id,
              email,
              name,
              verified: false,
              createdAt: new Date().toISOString()
            })
            return id
          }),
        pendingMail: stack.outbox.pendingCount(),
        // Read in units of work, so a worker's unit in progress is waited for.
        settled: Effect.gen(function* () {
          while (
            (yield* stack.transactions.atomically(stack.requests.pendingCount())) > 0 ||
            (yield* stack.transactions.atomically(stack.outbox.pendingCount())) > 0
          ) {
            yield* Effect.sleep("20 millis")
          }
        })
      })
    })
  ).pipe(Effect.provideService(Clock.Clock, time.clock))
}

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body)
})

const linkIn = (text: string) => {
  const link = signInLinkIn(text)
  if (link === undefined) throw new Error(`no sign-in link in: ${text}`)
  return link
}

const cookieOf = (headers: Headers) => {
  const raw = headers.get("set-cookie") ?? ""
  const value = /hub_session=([^;]*)/.exec(raw)?.[1]
  return { raw, value }
}

/** The sign-in nonce cookie of the browser that asked for each emailed link, by link. */
const askedBy = new Map<string, string>()

const nonceOf = (headers: Headers) => /hub_sign_in=([^;]*)/.exec(headers.get("set-cookie") ?? "")?.[1]

/** Opens a link as the browser that asked for it does (with its sign-in nonce), unless `asker` is false. */
const open = (url: string, headers: Record<string, string> = {}, asker = true) => {
  const nonce = asker ? askedBy.get(url) : undefined
  const cookie = [headers["cookie"], nonce === undefined ? undefined : `hub_sign_in=${nonce}`].filter(Boolean)
  return request(url, {
    redirect: "manual",
    headers: { ...headers, ...(cookie.length === 0 ? {} : { cookie: cookie.join("; ") }) }
  })
}

const me = (baseUrl: string, cookie: string | undefined) =>
  request(`${baseUrl}/api/v1/me`, { headers: cookie === undefined ? {} : { cookie: `hub_session=${cookie}` } })

/** Asks for a link, waits for its email, answers the link and the email. */
const emailedLink = (baseUrl: string, smtp: SmtpTestServer, email: string, body: Record<string, string> = {}) =>
  Effect.gen(function* () {
    const address = email.trim().toLowerCase()
    const before = smtp.to(address).length
    const asked = yield* request(`${baseUrl}/auth/email`, json({ email, ...body }))
    assert.strictEqual(asked.status, 202)
    const nonce = nonceOf(asked.headers)
    assert.isDefined(nonce)
    // The asking browser's nonce: short-lived, out of scripts' reach, sent only to the sign-in routes.
    const raw = asked.headers.get("set-cookie") ?? ""
    assert.match(raw, /HttpOnly/i)
    assert.match(raw, /SameSite=Lax/i)
    assert.match(raw, /Path=\/auth\/email(;|$)/)
    assert.match(raw, /Max-Age=900(;|$)/)
    const mails = yield* Effect.promise(() => smtp.waitFor(address, before + 1))
    const mail = mails[mails.length - 1]!
    const link = linkIn(mail.text)
    askedBy.set(link, nonce!)
    return { link, mail, nonce: nonce! }
  })

/** A JSON POST sent from the loopback address `from`: the hub tells clients apart by their address. */
const postFrom = (from: string, url: string, body: unknown) =>
  Effect.promise(
    () =>
      new Promise<number>((resolve, reject) => {
        const raw = JSON.stringify(body)
        const sent = httpRequest(
          url,
          { method: "POST", localAddress: from, headers: { "content-type": "application/json" } },
          (answer) => {
            answer.resume()
            answer.on("end", () => resolve(answer.statusCode ?? 0))
          }
        )
        sent.on("error", reject)
        sent.end(raw)
      })
  )

const signed = (caller: string, key: string, body: unknown, timestamp = Math.floor(Date.now() / 1000)) => {
  const raw = JSON.stringify(body)
  return {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-workspace-service-id": caller,
      "x-platform-timestamp": String(timestamp),
      "x-platform-signature": sign({ secret: key, timestamp, payload: raw })
    },
    body: raw
  }
}

const backends: ReadonlyArray<{ readonly name: string; readonly backend: SqlBackend | undefined }> = [
  { name: "memory", backend: undefined },
  ...sqlBackends.map((backend) => ({ name: backend.name, backend }))
]

describe.each(backends)("hub email sign-in ($name)", ({ backend }) => {
  it.live(
    "a link asked for by email signs in once; /api/v1/me names the person; a replay is refused",
    () =>
      withHub(backend, {}, ({ baseUrl, smtp, addUser }) =>
        Effect.gen(function* () {
          yield* addUser("ada@example.test", "Ada Lovelace")
          const { link, mail } = yield* emailedLink(baseUrl, smtp, "  Ada@Example.TEST ")
          assert.strictEqual(mail.subject, "Your sign-in link")
          assert.include(mail.html, `href="${link}"`)
          assert.isTrue(link.startsWith(`${baseUrl}/auth/email/callback?token=`))

          const opened = yield* open(link)
          assert.strictEqual(opened.status, 303)
          assert.strictEqual(opened.headers.get("location"), "/")
          assert.strictEqual(opened.headers.get("cache-control"), "no-store")
          const cookie = cookieOf(opened.headers)
          assert.isDefined(cookie.value)
          assert.match(cookie.raw, /HttpOnly/i)
          assert.match(cookie.raw, /SameSite=Lax/i)
          assert.match(cookie.raw, /Path=\//)
          // The public address is loopback over http in these tests: the cookie is not Secure there.
          assert.notMatch(cookie.raw, /Secure/i)

          const who = yield* me(baseUrl, cookie.value)
          assert.strictEqual(who.status, 200)
          assert.deepStrictEqual(who.json, {
            data: { user: { email: "ada@example.test", name: "Ada Lovelace" }, organizations: [] }
          })

          const replayed = yield* open(link, { accept: "text/html" })
          assert.strictEqual(replayed.status, 401)
          assert.include(replayed.headers.get("content-type") ?? "", "text/html")
          assert.include(replayed.text, "cannot be used")
          assert.isNull(replayed.headers.get("set-cookie"))
          const replayedJson = yield* open(link)
          assert.strictEqual(replayedJson.status, 401)
          assert.strictEqual(replayedJson.json.error.code, "UNAUTHORIZED")
        })
      ),
    60_000
  )

  it.live(
    "an expired, tampered or missing token is refused; a link lands on its root-relative next",
    () =>
      withHub(backend, {}, ({ baseUrl, smtp, addUser, advance }) =>
        Effect.gen(function* () {
          yield* addUser("bob@example.test", "Bob")
          const late = yield* emailedLink(baseUrl, smtp, "bob@example.test")
          advance(15 * 60_000 + 1_000)
          assert.strictEqual((yield* open(late.link)).status, 401)

          const fresh = yield* emailedLink(baseUrl, smtp, "bob@example.test", { next: "/apps/decisions/inbox?x=1" })
          const tampered = fresh.link.slice(0, -2) + (fresh.link.endsWith("AA") ? "BB" : "AA")
          assert.strictEqual((yield* open(tampered)).status, 401)
          assert.strictEqual((yield* open(`${baseUrl}/auth/email/callback`)).status, 401)
          assert.strictEqual((yield* open(`${baseUrl}/auth/email/callback?token=junk`)).status, 401)
          const opened = yield* open(fresh.link)
          assert.strictEqual(opened.status, 303)
          assert.strictEqual(opened.headers.get("location"), "/apps/decisions/inbox?x=1")

          // An absolute or protocol-relative next is refused at the request.
          for (const next of ["https://evil.example/", "//evil.example", "/\\evil.example"]) {
            const refused = yield* request(`${baseUrl}/auth/email`, json({ email: "bob@example.test", next }))
            assert.strictEqual(refused.status, 400, next)
            assert.strictEqual(refused.json.error.code, "VALIDATION_ERROR")
          }
        })
      ),
    60_000
  )

  it.live(
    "an unknown address gets the same answer and no email; a malformed one is a 400; a form post works",
    () =>
      withHub(backend, {}, ({ baseUrl, smtp, addUser, pendingMail }) =>
        Effect.gen(function* () {
          yield* addUser("cy@example.test", "Cy")
          const unknown = yield* request(`${baseUrl}/auth/email`, json({ email: "nobody@example.test" }))
          assert.strictEqual(unknown.status, 202)
          assert.deepStrictEqual(unknown.json, { data: { status: "sent" } })
          // A known address, asked for after: once its email arrived and nothing waits, nothing else was sent.
          const form = yield* request(`${baseUrl}/auth/email`, {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: "email=cy%40example.test"
          })
          assert.strictEqual(form.status, 202)
          assert.strictEqual(form.text, unknown.text)
          yield* Effect.promise(() => smtp.waitFor("cy@example.test"))
          // The worker records the send just after the server took it.
          while ((yield* pendingMail) > 0) yield* Effect.sleep("20 millis")
          assert.deepStrictEqual(
            smtp.received.flatMap((m) => m.to),
            ["cy@example.test"]
          )

          for (const email of ["not-an-address", "a@b", ""]) {
            const bad = yield* request(`${baseUrl}/auth/email`, json({ email }))
            assert.strictEqual(bad.status, 400)
            assert.strictEqual(bad.json.error.code, "VALIDATION_ERROR")
          }
        })
      ),
    60_000
  )

  it.live(
    "sign-in never keeps a session id the browser had before (fixation); logout ends the session",
    () =>
      withHub(backend, {}, ({ baseUrl, smtp, addUser }) =>
        Effect.gen(function* () {
          yield* addUser("eve@example.test", "Eve")
          yield* addUser("dan@example.test", "Dan")
          // Eve signs in and plants her session cookie in Dan's browser; Dan then opens his own link.
          const eve = cookieOf((yield* open((yield* emailedLink(baseUrl, smtp, "eve@example.test")).link)).headers)
          const danLink = (yield* emailedLink(baseUrl, smtp, "dan@example.test")).link
          const dan = cookieOf((yield* open(danLink, { cookie: `hub_session=${eve.value}` })).headers)
          assert.isDefined(dan.value)
          assert.notStrictEqual(dan.value, eve.value)
          assert.strictEqual((yield* me(baseUrl, dan.value)).json.data.user.email, "dan@example.test")
          // The planted session was ended, so it names nobody any more.
          assert.strictEqual((yield* me(baseUrl, eve.value)).status, 401)
          // A made-up cookie is no session either.
          const madeUp = yield* me(baseUrl, "hs_" + "A".repeat(43))
          assert.strictEqual(madeUp.status, 401)
          assert.strictEqual(madeUp.json.error.code, "UNAUTHORIZED")
          assert.strictEqual((yield* me(baseUrl, undefined)).status, 401)

          const out = yield* request(`${baseUrl}/auth/logout`, {
            method: "POST",
            headers: { cookie: `hub_session=${dan.value}`, origin: baseUrl }
          })
          assert.strictEqual(out.status, 204)
          assert.match(cookieOf(out.headers).raw, /hub_session=;.*Max-Age=0/i)
          assert.strictEqual((yield* me(baseUrl, dan.value)).status, 401)

          // A form logout answers with a redirect home.
          const again = cookieOf((yield* open((yield* emailedLink(baseUrl, smtp, "dan@example.test")).link)).headers)
          const formOut = yield* request(`${baseUrl}/auth/logout`, {
            method: "POST",
            redirect: "manual",
            headers: { cookie: `hub_session=${again.value}`, "content-type": "application/x-www-form-urlencoded" },
            body: ""
          })
          assert.strictEqual(formOut.status, 303)
          assert.strictEqual(formOut.headers.get("location"), "/")
          assert.strictEqual((yield* me(baseUrl, again.value)).status, 401)
        })
      ),
    60_000
  )

  it.live(
    "a person is sent at most three links an hour, whoever asks; requests past that are answered as usual",
    () =>
      withHub(backend, {}, ({ baseUrl, smtp, addUser, advance, settled }) =>
        Effect.gen(function* () {
          yield* addUser("jo@example.test", "Jo")
          const answers: Array<number> = []
          for (const from of ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6"]) {
            answers.push(yield* postFrom(from, `${baseUrl}/auth/email`, { email: "jo@example.test" }))
          }
          assert.deepStrictEqual(answers, [202, 202, 202, 202, 202])
          yield* settled
          assert.strictEqual(smtp.to("jo@example.test").length, 3)
          // An hour on, Jo is sent a link again.
          advance(61 * 60_000)
          const { link } = yield* emailedLink(baseUrl, smtp, "jo@example.test")
          assert.strictEqual((yield* open(link)).status, 303)
          yield* settled
          assert.strictEqual(smtp.to("jo@example.test").length, 4)
        })
      ),
    60_000
  )

  it.live(
    "a link opened in a browser that did not ask for it asks first, names the account, and is spent only by the form",
    () =>
      withHub(backend, {}, ({ baseUrl, smtp, addUser }) =>
        Effect.gen(function* () {
          yield* addUser("mallory@example.test", "Mallory")
          // Mallory asks for her own link and gets someone else's browser to open it.
          const { link } = yield* emailedLink(baseUrl, smtp, "mallory@example.test", { next: "/apps/x" })
          const page = yield* open(link, { accept: "text/html" }, false)
          assert.strictEqual(page.status, 200)
          assert.include(page.headers.get("content-type") ?? "", "text/html")
          assert.isNull(page.headers.get("set-cookie"))
          assert.strictEqual(page.headers.get("cache-control"), "no-store")
          assert.strictEqual(page.headers.get("x-frame-options"), "DENY")
          assert.include(page.headers.get("content-security-policy") ?? "", "frame-ancestors 'none'")
          assert.include(page.text, "mallory@example.test")
          assert.include(page.text, `<form method="post" action="/auth/email/callback">`)
          assert.notInclude(page.text, "Continuing signs")
          // Opening it there spent nothing: it asks again.
          assert.strictEqual((yield* open(link, { accept: "text/html" }, false)).status, 200)

          const token = new URL(link).searchParams.get("token")!
          const confirm = (headers: Record<string, string>) =>
            request(`${baseUrl}/auth/email/callback`, {
              method: "POST",
              redirect: "manual",
              headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
              body: new URLSearchParams({ token }).toString()
            })
          // The form posted from another site's page is refused, and the link still works.
          const foreign = yield* confirm({ origin: "https://evil.example" })
          assert.strictEqual(foreign.status, 403)
          assert.isNull(foreign.headers.get("set-cookie"))
          const confirmed = yield* confirm({ origin: baseUrl })
          assert.strictEqual(confirmed.status, 303)
          assert.strictEqual(confirmed.headers.get("location"), "/apps/x")
          const who = yield* me(baseUrl, cookieOf(confirmed.headers).value)
          assert.strictEqual(who.json.data.user.email, "mallory@example.test")
          assert.strictEqual((yield* open(link, {}, false)).status, 401)
          assert.strictEqual((yield* confirm({ origin: baseUrl })).status, 401)
        })
      ),
    60_000
  )

  it.live(
    "opening someone else's link never ends a person's session silently: the page says continuing signs them out",
    () =>
      withHub(backend, {}, ({ baseUrl, smtp, addUser }) =>
        Effect.gen(function* () {
          yield* addUser("mallory@example.test", "Mallory")
          yield* addUser("dan@example.test", "Dan")
          const dan = cookieOf((yield* open((yield* emailedLink(baseUrl, smtp, "dan@example.test")).link)).headers)
          const { link } = yield* emailedLink(baseUrl, smtp, "mallory@example.test")
          const page = yield* open(link, { cookie: `hub_session=${dan.value}`, accept: "text/html" }, false)
          assert.strictEqual(page.status, 200)
          assert.include(page.text, "mallory@example.test")
          assert.include(page.text, "You are signed in here as dan@example.test")
          assert.include(page.text, "Continuing signs dan@example.test out")
          assert.isNull(page.headers.get("set-cookie"))
          assert.strictEqual((yield* me(baseUrl, dan.value)).json.data.user.email, "dan@example.test")
          // Continuing, as the page said, ends Dan's session.
          const confirmed = yield* request(`${baseUrl}/auth/email/callback`, {
            method: "POST",
            redirect: "manual",
            headers: {
              "content-type": "application/x-www-form-urlencoded",
              origin: baseUrl,
              cookie: `hub_session=${dan.value}`
            },
            body: new URLSearchParams({ token: new URL(link).searchParams.get("token")! }).toString()
          })
          assert.strictEqual(confirmed.status, 303)
          assert.strictEqual((yield* me(baseUrl, dan.value)).status, 401)
          assert.strictEqual(
            (yield* me(baseUrl, cookieOf(confirmed.headers).value)).json.data.user.email,
            "mallory@example.test"
          )
        })
      ),
    60_000
  )

  it.live(
    "a change carried by the session cookie from another site's page is 403; from the hub's own page it passes",
    () =>
      withHub(backend, {}, ({ baseUrl, smtp, addUser }) =>
        Effect.gen(function* () {
          yield* addUser("fay@example.test", "Fay")
          const fay = cookieOf((yield* open((yield* emailedLink(baseUrl, smtp, "fay@example.test")).link)).headers)
          const change = (headers: Record<string, string>) =>
            request(`${baseUrl}/api/v1/test/change`, {
              method: "POST",
              headers: { cookie: `hub_session=${fay.value}`, ...headers }
            })
          const foreign = yield* change({ origin: "https://evil.example" })
          assert.strictEqual(foreign.status, 403)
          assert.strictEqual(foreign.json.error.code, "FORBIDDEN")
          assert.strictEqual((yield* change({ referer: "https://evil.example/page" })).status, 403)
          assert.strictEqual((yield* change({ origin: "null" })).status, 403)
          const own = yield* change({ origin: baseUrl })
          assert.strictEqual(own.status, 200)
          assert.strictEqual(own.json.data.email, "fay@example.test")
          assert.strictEqual((yield* change({ referer: `${baseUrl}/apps/x` })).status, 200)
          const logoutForeign = yield* request(`${baseUrl}/auth/logout`, {
            method: "POST",
            headers: { cookie: `hub_session=${fay.value}`, origin: "https://evil.example" }
          })
          assert.strictEqual(logoutForeign.status, 403)
          assert.strictEqual((yield* me(baseUrl, fay.value)).status, 200)
        })
      ),
    60_000
  )
})

describe("hub email sign-in limits and viewer links (memory)", () => {
  it.live(
    "links are rate limited per address and per client, known address or not",
    () =>
      Effect.gen(function* () {
        yield* withHub(undefined, { perAddress: 2, perClient: 100 }, ({ baseUrl, addUser }) =>
          Effect.gen(function* () {
            yield* addUser("gus@example.test", "Gus")
            for (const email of ["gus@example.test", "ghost@example.test"]) {
              assert.strictEqual((yield* request(`${baseUrl}/auth/email`, json({ email }))).status, 202)
              assert.strictEqual((yield* request(`${baseUrl}/auth/email`, json({ email }))).status, 202)
              const limited = yield* request(`${baseUrl}/auth/email`, json({ email: email.toUpperCase() }))
              assert.strictEqual(limited.status, 429)
              assert.strictEqual(limited.json.error.code, "RATE_LIMITED")
              assert.isAtLeast(Number(limited.headers.get("retry-after")), 1)
            }
          })
        )
        yield* withHub(undefined, { perAddress: 100, perClient: 3 }, ({ baseUrl }) =>
          Effect.gen(function* () {
            for (const n of [1, 2, 3]) {
              const answer = yield* request(`${baseUrl}/auth/email`, json({ email: `p${n}@example.test` }))
              assert.strictEqual(answer.status, 202)
            }
            const limited = yield* request(`${baseUrl}/auth/email`, json({ email: "p4@example.test" }))
            assert.strictEqual(limited.status, 429)
          })
        )
      }),
    60_000
  )

  it.live(
    "one client's requests for an address never block another client's requests for it",
    () =>
      withHub(undefined, { perAddress: 2, perClient: 100 }, ({ baseUrl, addUser }) =>
        Effect.gen(function* () {
          yield* addUser("ivy@example.test", "Ivy")
          const ask = (from: string) => postFrom(from, `${baseUrl}/auth/email`, { email: "ivy@example.test" })
          assert.deepStrictEqual(
            [yield* ask("127.0.0.2"), yield* ask("127.0.0.2"), yield* ask("127.0.0.2")],
            [202, 202, 429]
          )
          // Ivy, from her own address, still gets her answers; so does the first client for another address.
          assert.deepStrictEqual([yield* ask("127.0.0.3"), yield* ask("127.0.0.3")], [202, 202])
          assert.strictEqual(yield* postFrom("127.0.0.2", `${baseUrl}/auth/email`, { email: "ann@example.test" }), 202)
        })
      ),
    60_000
  )

  it.live(
    "without the secrets key sign-in by email is 501 for every address",
    () =>
      withHub(undefined, { secretsKey: undefined }, ({ baseUrl, addUser }) =>
        Effect.gen(function* () {
          yield* addUser("hal@example.test", "Hal")
          for (const email of ["hal@example.test", "ghost@example.test"]) {
            const answer = yield* request(`${baseUrl}/auth/email`, json({ email }))
            assert.strictEqual(answer.status, 501)
            assert.strictEqual(answer.json.error.code, "NOT_CONFIGURED")
          }
        })
      ),
    60_000
  )
})

describe.each(backends)("viewer links for meeting-recaps ($name)", ({ backend }) => {
  const body = { email: "Viewer@Client.test", invitedByEmail: "host@example.test", landingPath: "/recordings/r1?t=30" }
  const link = (baseUrl: string, payload: unknown = body, caller = "meeting-recaps", key = recapsContextKey) =>
    request(`${baseUrl}/api/v1/service-data/viewer-link`, signed(caller, key, payload))

  it.live(
    "makes the viewer's account, signs in on the landing path, and each call spends the previous link",
    () =>
      withHub(backend, {}, ({ baseUrl }) =>
        Effect.gen(function* () {
          const first = yield* link(baseUrl)
          assert.strictEqual(first.status, 200)
          assert.isTrue(first.json.data.created)
          const second = yield* link(baseUrl)
          assert.strictEqual(second.status, 200)
          assert.isFalse(second.json.data.created)
          assert.notStrictEqual(second.json.data.url, first.json.data.url)
          assert.isTrue((second.json.data.url as string).startsWith(`${baseUrl}/`))

          assert.strictEqual((yield* open(first.json.data.url)).status, 401)
          const opened = yield* open(second.json.data.url)
          assert.strictEqual(opened.status, 303)
          assert.strictEqual(opened.headers.get("location"), "/recordings/r1?t=30")
          const who = yield* me(baseUrl, cookieOf(opened.headers).value)
          assert.deepStrictEqual(who.json, {
            data: { user: { email: "viewer@client.test", name: null }, organizations: [] }
          })
          assert.strictEqual((yield* open(second.json.data.url)).status, 401)

          // Opened where another person is signed in, a viewer link asks first rather than end their session.
          const third = yield* link(baseUrl)
          const viewer = cookieOf(opened.headers).value
          const other = yield* link(baseUrl, { ...body, email: "guest2@client.test" })
          const guest2 = cookieOf((yield* open(other.json.data.url)).headers).value
          const asked = yield* open(third.json.data.url, { cookie: `hub_session=${guest2}`, accept: "text/html" })
          assert.strictEqual(asked.status, 200)
          assert.include(asked.text, "viewer@client.test")
          assert.include(asked.text, "Continuing signs guest2@client.test out")
          assert.strictEqual((yield* me(baseUrl, guest2)).status, 200)
          // Where that same viewer is signed in, it signs in at once.
          assert.strictEqual((yield* open(third.json.data.url, { cookie: `hub_session=${viewer}` })).status, 303)
        })
      ),
    60_000
  )

  it.live(
    "refuses a landing path that is not root-relative, other callers and bad signatures",
    () =>
      withHub(backend, {}, ({ baseUrl, addUser }) =>
        Effect.gen(function* () {
          for (const landingPath of [
            "//evil.example/x",
            "/\\evil.example",
            "https://evil.example/",
            "javascript:alert(1)",
            "recordings/r1",
            "/a\u0001b",
            "/a b",
            "",
            "/" + "a".repeat(512)
          ]) {
            const refused = yield* link(baseUrl, { ...body, landingPath })
            assert.strictEqual(refused.status, 400, JSON.stringify(landingPath))
            assert.strictEqual(refused.json.error.code, "VALIDATION_ERROR")
          }
          const bad = yield* link(baseUrl, { ...body, email: "nope" })
          assert.strictEqual(bad.status, 400)

          const byTasks = yield* link(baseUrl, body, "tasks", tasksContextKey)
          const badKey = yield* link(baseUrl, body, "meeting-recaps", "wrong-key-0123456789abcdef")
          const stale = yield* request(
            `${baseUrl}/api/v1/service-data/viewer-link`,
            signed("meeting-recaps", recapsContextKey, body, Math.floor(Date.now() / 1000) - 301)
          )
          for (const refused of [byTasks, badKey, stale]) {
            assert.strictEqual(refused.status, 401)
            assert.strictEqual(refused.text, byTasks.text)
          }
          // A body other than the one signed is refused too.
          const swapped = signed("meeting-recaps", recapsContextKey, body)
          const tampered = yield* request(`${baseUrl}/api/v1/service-data/viewer-link`, {
            ...swapped,
            body: JSON.stringify({ ...body, email: "someone-else@client.test" })
          })
          assert.strictEqual(tampered.status, 401)

          // A workspace account the service did not make is never given a sign-in: the plain landing URL.
          yield* addUser("member@example.test", "Member")
          const member = yield* link(baseUrl, { ...body, email: "member@example.test" })
          assert.strictEqual(member.status, 200)
          assert.deepStrictEqual(member.json.data, { url: `${baseUrl}/recordings/r1?t=30`, created: false })
        })
      ),
    60_000
  )

  it.live(
    "answers 501 when no context keys are configured",
    () =>
      withHub(backend, { contextKeys: noContextKeys }, ({ baseUrl }) =>
        Effect.gen(function* () {
          const answer = yield* link(baseUrl)
          assert.strictEqual(answer.status, 501)
          assert.strictEqual(answer.json.error.code, "NOT_CONFIGURED")
        })
      ),
    60_000
  )
})
