import { Schema } from "effect"

// The answers of the hub's person plane that its own web app reads. They import nothing but `effect`, so the
// web app can take their types (`import type`) and a changed field fails its type check.

export const Timestamp = Schema.String.annotate({ format: "date-time" })

export const MeSchema = Schema.Struct({
  user: Schema.Struct({ email: Schema.String, name: Schema.NullOr(Schema.String) }),
  organizations: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String, role: Schema.String }))
}).annotate({ identifier: "Me" })

export const FeedItemSchema = Schema.Struct({
  id: Schema.String,
  service: Schema.String,
  type: Schema.String,
  title: Schema.String,
  body: Schema.NullOr(Schema.String),
  url: Schema.NullOr(
    Schema.String.annotate({ description: "A workspace-relative path (such as /apps/decisions/…) or an http(s) link" })
  ),
  createdAt: Timestamp,
  readAt: Schema.NullOr(Timestamp)
}).annotate({ identifier: "FeedNotification" })

export const FeedPageSchema = Schema.Struct({
  items: Schema.Array(FeedItemSchema),
  unreadCount: Schema.Number,
  nextCursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "NotificationFeed" })

export const WorkspaceAppSchema = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  pages: Schema.Boolean,
  embedUrl: Schema.NullOr(Schema.String),
  appUrl: Schema.NullOr(Schema.String).annotate({
    description: "The app's own web app, which the workspace links to; people sign in there through the hub"
  })
}).annotate({ identifier: "WorkspaceApp" })
