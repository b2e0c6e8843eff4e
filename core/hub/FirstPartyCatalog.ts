import { EventCatalog, type CatalogAddition } from "./EventCatalog.ts"

/**
 * A path of this origin: a `/` not followed by another `/` or a backslash (either would make another origin's
 * address). Written without look-ahead: catalog patterns run on RE2.
 */
export const firstPartyUrlPattern = "^/([^/\\\\]|$)"

/**
 * The notification `data` every first-party producer may send: a title, an optional body, a
 * workspace-relative `url` (a path, never another origin), a category and the answers its message offers. Further fields are allowed:
 * changes within v1 are additive.
 */
export const notificationDataSchema = {
  type: "object",
  required: ["title"],
  properties: {
    title: { type: "string", minLength: 1, maxLength: 200 },
    body: { type: "string", maxLength: 2000 },
    url: { type: "string", minLength: 1, maxLength: 2048, pattern: firstPartyUrlPattern },
    category: { type: "string", minLength: 1, maxLength: 64 },
    // Answers the message offers, each the recipient's own link (a decision's options): docs/notifications.md.
    actions: {
      type: "array",
      maxItems: 8,
      items: {
        type: "object",
        required: ["label", "url"],
        properties: {
          label: { type: "string", minLength: 1, maxLength: 120 },
          url: { type: "string", minLength: 1, maxLength: 2048 }
        }
      }
    }
  }
} as const

/**
 * A first-party producer's word that what its notifications leading to `url` asked for is settled (a decision
 * answered): `url` names them (a path of the producer's), `categories` narrows them, `body` is what they say
 * from now on. The hub marks every such notification done, whoever it was filed for (core/hub/EventProcessor.ts).
 */
export const settlementDataSchema = {
  type: "object",
  required: ["url"],
  properties: {
    url: { type: "string", minLength: 1, maxLength: 2048, pattern: firstPartyUrlPattern },
    body: { type: "string", maxLength: 2000 },
    categories: {
      type: "array",
      maxItems: 16,
      items: { type: "string", minLength: 1, maxLength: 64 }
    }
  }
} as const

/**
 * The task inbox's notification (core/tasks/Tasks.ts `delegate`): who delegated which task, and the task's
 * absolute link in the inbox.
 */
export const taskNotificationDataSchema = {
  type: "object",
  required: ["title"],
  properties: {
    ...notificationDataSchema.properties,
    kind: { type: "string", minLength: 1, maxLength: 64 },
    taskId: { type: "string", minLength: 1, maxLength: 64 },
    from: {
      type: "object",
      properties: { email: { type: "string", maxLength: 254 }, name: { type: ["string", "null"], maxLength: 200 } }
    },
    reason: { type: "string", maxLength: 2000 },
    link: { type: "string", maxLength: 2048, format: "uri" }
  }
} as const

/** The first-party types, producer = the service id. */
export const firstPartyCatalog: ReadonlyArray<CatalogAddition> = [
  {
    type: "decisions.notification.created",
    producer: "decisions",
    isNotification: true,
    dataSchema: notificationDataSchema
  },
  {
    type: "decisions.notification.settled",
    producer: "decisions",
    isNotification: true,
    dataSchema: settlementDataSchema
  },
  {
    type: "tasks.notification.created",
    producer: "tasks",
    isNotification: true,
    dataSchema: taskNotificationDataSchema
  }
]

/**
 * Seeds the first-party types at start, after the first-party services are registered (a type whose producer
 * is not registered is skipped with a warning). Idempotent: a type already stored, possibly changed by an
 * operator, is kept.
 */
export const seedFirstPartyCatalog = EventCatalog.use((catalog) => catalog.seed(firstPartyCatalog))
