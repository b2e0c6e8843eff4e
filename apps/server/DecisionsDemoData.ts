import { Clock, Effect } from "effect"
import { Decisions, type CallerIdentity, type WorkspaceUser } from "../../core/decisions/Decisions.ts"
import { OrganizationAdmins } from "../../core/decisions/OrganizationAdmins.ts"
import { isoAt } from "../../core/kernel/Timestamp.ts"
import { demoOrgRoles } from "./HubDemoData.ts"

const dayMs = 86_400_000

/**
 * The decisions demo in the hub's demo organization (`organizationId`, the hub's id of it): Alice and Bob
 * approve, Carol delivers, and an agent key asks the approvers one open question. Alice and Bob are noted as
 * the organization's admins (as their identity tokens will show). Loads once: when the `approvers` role
 * exists it changes nothing but issues a fresh agent key (keys are shown once). The open decision's
 * notifications wait in the outbox and reach Alice's and Bob's feeds once the server runs.
 */
export const loadDecisionsDemoData = (organizationId: string) =>
  Effect.gen(function* () {
    const decisions = yield* Decisions
    const admins = yield* OrganizationAdmins
    const now = yield* Clock.currentTimeMillis
    const alice: WorkspaceUser = { organizationId, email: "alice@demo.example.com", isAdmin: true }
    for (const [email, role] of Object.entries(demoOrgRoles)) {
      yield* admins.note(organizationId, email, role === "OWNER" || role === "ADMIN", isoAt(now))
    }
    const loaded = (yield* decisions.listRoles(alice)).every((role) => role.slug !== "approvers")
    if (loaded) {
      yield* decisions.createRole(alice, {
        slug: "approvers",
        name: "Approvers",
        description: "Sign off launch dates and client commitments."
      })
      yield* decisions.assign(alice, "approvers", "alice@demo.example.com")
      yield* decisions.assign(alice, "approvers", "bob@demo.example.com")
      yield* decisions.createRole(alice, { slug: "delivery", name: "Delivery", description: "QA and releases." })
      yield* decisions.assign(alice, "delivery", "carol@demo.example.com")
    }
    const key = yield* decisions.createKey(alice, "Demo agent (npm run seed)")
    if (loaded) {
      const caller: CallerIdentity = { organizationId, callerName: key.key.name, keyId: key.key.id }
      yield* decisions.create(caller, {
        title: "Move the Acme launch to the first Monday of next month?",
        body: "From the Acme relaunch weekly: content migration is a week behind.",
        roleSlug: "approvers",
        options: [
          { label: "Move it", consequence: "Acme is told today; the redirect map gets another week." },
          { label: "Keep the date", consequence: "Carol's QA starts Monday with what is migrated." }
        ],
        urgency: "urgent",
        expiresAt: isoAt(now + 7 * dayMs)
      })
    }
    // The roles the agent key can ask: every role of its organization.
    const roles = (yield* decisions.listRoles(alice)).map((role) => role.slug)
    return { loaded, callerKey: key.plaintext, roles }
  })
