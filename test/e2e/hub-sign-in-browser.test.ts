import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { BrowserContext } from "playwright-core"
import { launchBrowser } from "../support/Chromium.ts"
import { signInLinkIn } from "../support/EmailSignIn.ts"
import { serveSignIn } from "../support/HubSignIn.ts"
import { startSmtpServer } from "../support/SmtpServer.ts"

const smtpServer = Effect.acquireRelease(
  Effect.promise(() => startSmtpServer()),
  (smtp) => Effect.promise(() => smtp.close())
)

const chromium = Effect.acquireRelease(
  Effect.promise(() => launchBrowser()),
  (browser) => Effect.promise(() => browser.close())
)

const sessionOf = async (context: BrowserContext) =>
  (await context.cookies()).find((cookie) => cookie.name === "hub_session")?.value

describe("email sign-in links in a browser (Chromium)", () => {
  it.live(
    "the browser that asked signs in at once; another browser is asked first and signs in only by the form",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const smtp = yield* smtpServer
          const hub = yield* serveSignIn({ smtp })
          const browser = yield* chromium
          for (const [email, name] of [
            ["ada@example.test", "Ada"],
            ["mallory@example.test", "Mallory"]
          ] as const) {
            yield* hub.directory.createUser({
              id: `usr_${name}`,
              email,
              name,
              verified: true,
              createdAt: "2040-01-01T00:00:00.000Z"
            })
          }
          /** Asks for a link from `context` (its cookies are the browser's), answers the emailed link. */
          const ask = (context: BrowserContext, email: string) =>
            Effect.promise(async () => {
              const before = smtp.to(email).length
              const asked = await context.request.post(`${hub.baseUrl}/auth/email`, { form: { email } })
              assert.strictEqual(asked.status(), 202)
              const mail = (await smtp.waitFor(email, before + 1)).at(-1)!
              return signInLinkIn(mail.text)!
            })

          // Ada asks in her browser and opens her link there: signed in at once.
          const ada = yield* Effect.promise(() => browser.newContext())
          const adaLink = yield* ask(ada, "ada@example.test")
          const adaPage = yield* Effect.promise(() => ada.newPage())
          yield* Effect.promise(() => adaPage.goto(adaLink))
          assert.strictEqual(new URL(adaPage.url()).pathname, "/")
          const adaSession = yield* Effect.promise(() => sessionOf(ada))
          assert.isDefined(adaSession)

          // Mallory asks for her own link in her browser and gets Ada to open it.
          const mallory = yield* Effect.promise(() => browser.newContext())
          const malloryLink = yield* ask(mallory, "mallory@example.test")
          yield* Effect.promise(() => adaPage.goto(malloryLink))
          const heading = yield* Effect.promise(() => adaPage.getByRole("heading").textContent())
          assert.strictEqual(heading, "Sign in with this link?")
          const text = yield* Effect.promise(() => adaPage.locator("main").innerText())
          assert.include(text, "mallory@example.test")
          assert.include(text, "You are signed in here as ada@example.test")
          // Nothing changed yet: Ada is still signed in as herself.
          assert.strictEqual(yield* Effect.promise(() => sessionOf(ada)), adaSession)
          const me = yield* Effect.promise(() => ada.request.get(`${hub.baseUrl}/api/v1/me`))
          assert.strictEqual(((yield* Effect.promise(() => me.json())) as any).data.user.email, "ada@example.test")

          // A browser with no session that did not ask is asked too; the form signs it in.
          const stranger = yield* Effect.promise(() => browser.newContext())
          const page = yield* Effect.promise(() => stranger.newPage())
          yield* Effect.promise(() => page.goto(malloryLink))
          assert.notInclude(yield* Effect.promise(() => page.locator("main").innerText()), "signed in here")
          assert.isUndefined(yield* Effect.promise(() => sessionOf(stranger)))
          yield* Effect.promise(() =>
            Promise.all([
              page.waitForURL(`${hub.baseUrl}/`),
              page.getByRole("button", { name: "Sign in as mallory@example.test" }).click()
            ])
          )
          const signedIn = yield* Effect.promise(() => stranger.request.get(`${hub.baseUrl}/api/v1/me`))
          assert.strictEqual(
            ((yield* Effect.promise(() => signedIn.json())) as any).data.user.email,
            "mallory@example.test"
          )
          // The link is spent now: Ada's browser gets the refusal.
          const spent = yield* Effect.promise(() => adaPage.goto(malloryLink))
          assert.strictEqual(spent?.status(), 401)
          assert.strictEqual(yield* Effect.promise(() => sessionOf(ada)), adaSession)
        })
      ),
    120_000
  )
})
