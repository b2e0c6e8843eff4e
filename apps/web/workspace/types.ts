import type {
  ActionResult,
  PageDocumentLoose,
  PageEntry as PageEntrySchema
} from "../../../core/kernel/PageDocument.ts"
import type {
  FeedItemSchema,
  FeedPageSchema,
  MeSchema,
  WorkspaceAppSchema
} from "../../../adapters/http/hub/Schemas.ts"

/**
 * The hub's answers the workspace reads, as the hub's contract states them (type-only imports: nothing of
 * the contract reaches the browser, and a changed field fails the web app's type check).
 */

export type Me = typeof MeSchema.Encoded

export type Notification = typeof FeedItemSchema.Encoded

export type NotificationPage = typeof FeedPageSchema.Encoded

export type WorkspaceApp = typeof WorkspaceAppSchema.Encoded

export type PageEntry = typeof PageEntrySchema.Encoded

/** A block as the renderer reads it: its `type` decides, and an unknown type is shown as such. */
export interface Block {
  readonly type: string
  readonly [field: string]: unknown
}

/** A page of a service: its blocks as the renderer reads them (Blocks.tsx). */
export interface PageDocument extends Omit<typeof PageDocumentLoose.Encoded, "blocks"> {
  readonly blocks: ReadonlyArray<Block>
}

export type ActionAnswer = typeof ActionResult.Encoded
