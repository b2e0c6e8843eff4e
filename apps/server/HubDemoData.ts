import { Effect } from "effect"
import { Directory, orgStatus, type OrgRole } from "../../core/hub/Directory.ts"
import { Identity } from "../../core/hub/Identity.ts"
import { demoPeople } from "./TasksDemoData.ts"

/** The demo organization at the hub: the agency Alice, Bob and Carol work at in the task inbox's demo. */
export const demoOrganizationName = "Demo Agency"

/** Their standing in it: Alice owns it, Bob helps run it, Carol is a member. */
export const demoOrgRoles: Readonly<Record<(typeof demoPeople)[number]["email"], OrgRole>> = {
  "alice@demo.example.com": "OWNER",
  "bob@demo.example.com": "ADMIN",
  "carol@demo.example.com": "MEMBER"
}

/** The first-party apps the demo organization installs, once the server has registered them. */
const demoApps = ["decisions", "tasks"] as const

/**
 * The demo people in the hub's directory: verified users, members of the demo organization, which installs
 * the first-party apps. Each step is skipped when already done, so the demo loads as often as it is asked
 * to. An app the registry does not hold yet (the server has never started on this database) is not
 * installed: answered in `notInstalled`, for the next run.
 */
export const loadHubDemoData = Effect.gen(function* () {
  const identity = yield* Identity
  const directory = yield* Directory
  const existing = (yield* directory.listOrgs()).find(
    (org) => org.name === demoOrganizationName && orgStatus(org) === "active"
  )
  const org = existing ?? (yield* identity.createOrg({ name: demoOrganizationName, tier: "monthly" }))
  for (const person of demoPeople) {
    if ((yield* directory.findUserByEmail(person.email)) === undefined) {
      yield* identity.createUser({ email: person.email, name: person.name, verified: true })
    }
    yield* identity
      .addMember(org.id, { email: person.email, role: demoOrgRoles[person.email] })
      .pipe(Effect.catchTag("Conflict", () => Effect.void))
  }
  const notInstalled: Array<string> = []
  for (const app of demoApps) {
    const installed = yield* directory.findInstallation(org.id, app)
    if (installed?.active === true) continue
    yield* identity
      .install(org.id, app, { consents: { companyId: true, accessClaims: false, embed: false }, permissions: [] })
      .pipe(Effect.catchTag("NotFound", () => Effect.sync(() => void notInstalled.push(app))))
  }
  return { orgId: org.id, created: existing === undefined, notInstalled }
})
