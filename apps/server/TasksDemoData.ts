import { Clock, Effect } from "effect"
import * as Q from "../../core/tasks/Query.ts"
import { RecordStore, type StoredRecord } from "../../core/tasks/RecordStore.ts"
import { Proposals } from "../../core/tasks/Proposals.ts"
import { TaskAccess } from "../../core/tasks/TaskAccess.ts"
import { Tasks, type TaskUser } from "../../core/tasks/Tasks.ts"

/** The demo people: each gets an API key when the demo is loaded. */
export const demoPeople = [
  { email: "alice@demo.example.com", name: "Alice Martin" },
  { email: "bob@demo.example.com", name: "Bob Chen" },
  { email: "carol@demo.example.com", name: "Carol Diaz" }
] as const

const dayMs = 86_400_000

/**
 * A realistic small agency: two clients, three projects with outcomes, meetings with summaries and action
 * items, tasks in every list, and open proposals from the meetings, all for Alice, Bob and Carol. Tasks and
 * proposals go through the use cases, so they follow the same rules as the API. Loads once: when Alice is
 * already in the store it answers `loaded: false` and changes nothing. Either way it issues one fresh API
 * key per person (keys are shown once).
 */
export const loadDemoData = Effect.gen(function* () {
  const store = yield* RecordStore
  const tasks = yield* Tasks
  const proposals = yield* Proposals
  const access = yield* TaskAccess
  const now = yield* Clock.currentTimeMillis
  const at = (days: number, hour = 10) => {
    const d = new Date(now + days * dayMs)
    d.setUTCHours(hour, 0, 0, 0)
    return d.toISOString()
  }
  const day = (days: number) => at(days).slice(0, 10)

  const existing = yield* store.select("collaborators", Q.eq("email", demoPeople[0].email), { limit: 1 })
  const loaded = existing.length === 0
  const people: Array<TaskUser> = []
  for (const person of demoPeople) {
    const found = yield* store.select("collaborators", Q.eq("email", person.email), { limit: 1 })
    const record = found[0] ?? (yield* store.create("collaborators", { ...person }))
    people.push({ id: record.id, email: person.email, name: person.name })
  }
  const [alice, bob, carol] = people as [TaskUser, TaskUser, TaskUser]

  if (loaded) {
    const client = (name: string) => store.create("clients", { name })
    const acme = yield* client("Acme Corporation")
    const globex = yield* client("Globex Industries")
    yield* client("Initech")

    const project = (name: string, c: StoredRecord, manager: TaskUser, status: string, startDays: number) =>
      store.create("projects", {
        name,
        status,
        priority: "P1: Top Priority",
        startDate: day(startDays),
        endDate: day(startDays + 90),
        client: [c.id],
        accountManager: [manager.id]
      })
    const website = yield* project("Acme Website Relaunch", acme, alice, "Active", -30)
    yield* project("Acme Customer Portal", acme, alice, "Planning", 10)
    const migration = yield* project("Globex Data Migration", globex, bob, "Active", -60)

    for (const [p, name, status, description] of [
      [website, "New site live", "On Track", "The relaunched site serves all traffic."],
      [website, "SEO parity", "At Risk", "Organic traffic within 5% of the old site."],
      [migration, "Legacy CRM retired", "On Track", "All accounts moved; the old CRM is read-only."]
    ] as const) {
      yield* store.create("outcomes", { name, status, description, project: [p.id] })
    }

    const kickoff = yield* store.create("meetings", {
      name: "Acme relaunch weekly",
      startTime: at(-2, 14),
      duration: 2700,
      linkLabel: "Recording",
      linkUrl: "https://meet.example.com/rec/acme-weekly",
      recordingType: "video",
      transcriptUrl: "https://meet.example.com/rec/acme-weekly/transcript",
      projects: [website.id],
      clients: [acme.id],
      attendees: [alice.id, bob.id],
      createdBy: [alice.id],
      summary: "Design sign-off is done; content migration is behind by a week.",
      keyProgress: "Home and product pages approved by Acme marketing.",
      decisionsMade: "Launch moves to the first Monday of next month.",
      nextActions: "Bob finishes the redirect map; Alice confirms the launch date with Acme.",
      actionable:
        "- [ ] Bob: finish the redirect map (due Friday)\n- [ ] Alice: confirm launch date with Acme\n- [ ] Carol: QA the checkout flow",
      deepMatchStatus: "Done"
    })
    const sync = yield* store.create("meetings", {
      name: "Globex migration sync",
      startTime: at(-1, 16),
      duration: 1800,
      linkLabel: "Recording",
      linkUrl: "https://meet.example.com/rec/globex-sync",
      recordingType: "audio",
      transcriptUrl: "https://meet.example.com/rec/globex-sync/transcript",
      projects: [migration.id],
      clients: [globex.id],
      attendees: [alice.id, bob.id, carol.id],
      createdBy: [bob.id],
      summary: "Account import passed on staging; 3% of contacts fail validation.",
      keyProgress: "Staging import complete.",
      decisionsMade: "Invalid contacts go to a review queue rather than being dropped.",
      nextActions: "Carol writes the validation report; Alice reviews the queue design.",
      actionable: "- [ ] Carol: validation report\n- [ ] Alice: review queue design",
      deepMatchStatus: "Pending"
    })

    // Alice's inbox: asked by Bob, by an agent, and by herself.
    const redirects = yield* tasks.create(bob, {
      title: "Review the redirect map for the relaunch",
      description: "About 400 old URLs; check the product pages first.",
      assignedTo: alice.email,
      priority: "high"
    })
    yield* tasks.create(carol, {
      title: "Confirm the launch date with Acme",
      description: "From the Acme relaunch weekly: the launch moves to the first Monday of next month.",
      assignedTo: alice.email,
      origin: "AI Agent",
      originDetail: "meeting-debrief",
      priority: "urgent"
    })
    yield* tasks.create(alice, { title: "Book the Globex workshop room", priority: "low" })

    // Alice's board and history.
    const queue = yield* tasks.create(bob, {
      title: "Design the contact review queue",
      assignedTo: alice.email,
      project: migration.id
    })
    yield* tasks.accept(alice, queue.id, { projectId: migration.id, status: "In Progress" })
    const copy = yield* tasks.create(alice, { title: "Write the launch announcement", project: website.id })
    yield* tasks.accept(alice, copy.id, { projectId: website.id })
    yield* tasks.update(alice, copy.id, { dueDate: day(5) })
    const done = yield* tasks.create(alice, { title: "Collect Acme brand assets" })
    yield* tasks.accept(alice, done.id, { projectId: website.id })
    yield* tasks.update(alice, done.id, { status: "Done" })

    // Sent by Alice to others.
    const report = yield* tasks.create(alice, {
      title: "Write the contact validation report",
      assignedTo: carol.email,
      project: migration.id
    })
    yield* tasks.create(alice, { title: "QA the checkout flow", assignedTo: carol.email, priority: "p1" })

    // Open proposals from the meetings, for Alice to review.
    yield* proposals.create(alice, {
      taskId: redirects.id,
      meetingId: kickoff.id,
      type: "Priority change",
      name: "Redirect map blocks the launch",
      proposedChangesObj: { action: "change_priority", priority: "urgent" }
    })
    yield* proposals.create(alice, {
      taskId: copy.id,
      meetingId: kickoff.id,
      type: "Due date change",
      name: "Announcement due before the new launch date",
      proposedChangesObj: { action: "change_due_date", dueDate: day(3) }
    })
    yield* proposals.create(alice, {
      projectId: migration.id,
      meetingId: sync.id,
      type: "New task",
      name: "Review queue design",
      proposedChangesObj: {
        action: "create_task",
        title: "Review the contact queue design with Globex",
        description: "From the Globex migration sync: invalid contacts go to a review queue.",
        priority: "p1",
        dueDate: day(7)
      }
    })
    yield* proposals.create(alice, {
      taskId: report.id,
      meetingId: sync.id,
      type: "Reassignment",
      name: "Bob owns the validation data",
      proposedChangesObj: { action: "reassign", assignedTo: bob.email }
    })
  }

  const keys: Array<{ readonly email: string; readonly name: string; readonly key: string }> = []
  for (const person of people) {
    const { key } = yield* access.createApiKey(person, "demo (npm run seed)")
    keys.push({ email: person.email, name: person.name, key })
  }
  return { loaded, keys }
})
