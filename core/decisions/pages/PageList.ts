import type { PageEntry } from "../../kernel/PageDocument.ts"

/** The pages a person sees in the workspace's menu: everyone's lists, and the admin pages for org admins. */
export const pageEntries = (user: { readonly isAdmin: boolean }): ReadonlyArray<PageEntry> => [
  { id: "inbox", title: "Inbox", icon: "inbox", order: 1 },
  { id: "all", title: "All decisions", icon: "list", order: 2 },
  { id: "unrouted", title: "Unrouted", icon: "alert", order: 3 },
  { id: "roles", title: "Roles", icon: "users", order: 10 },
  { id: "templates", title: "Templates", icon: "template", order: 11 },
  ...(user.isAdmin
    ? [
        { id: "keys", title: "Caller keys", icon: "key", order: 12 },
        { id: "webhooks", title: "Webhooks", icon: "webhook", order: 13 },
        { id: "integrations", title: "Integrations", icon: "plug", order: 14 },
        { id: "flow", title: "Flow", icon: "chart", order: 15 }
      ]
    : [])
]
