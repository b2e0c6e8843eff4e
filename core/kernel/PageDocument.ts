import { Schema } from "effect"
import { ChartBlockSchema, type ChartBlock } from "./ChartBlock.ts"

/**
 * Pages a service serves through the uniform pages plane, rendered by the hub's workspace: a document of
 * blocks, each a `type` and its fields. The renderer skips a block type it does not know, so the vocabulary
 * can grow; the documents our services produce validate against `PageDocument` below (docs/pages.md).
 */

/** A workspace-relative link (`/apps/<serviceId>/<pageId>`, maybe with a query): never another origin. */
export const WorkspaceHref = Schema.String.check(
  Schema.isMaxLength(2048),
  Schema.isPattern(/^\/(?![/\\])[^\s]*$/, { description: "a workspace-relative path starting with a single /" })
)

/** An action id names what a button or form does; it travels as one path segment, so it has no / or space. */
export const ActionId = Schema.String.check(
  Schema.isMinLength(1),
  Schema.isMaxLength(512),
  Schema.isPattern(/^[A-Za-z0-9._~-]+$/, { description: "letters, digits and . _ ~ -" })
)

const Text = Schema.String.check(Schema.isMaxLength(65_536))

export interface HeadingBlock {
  readonly type: "heading"
  readonly text: string
  readonly level?: number
}
export interface TextBlock {
  readonly type: "text"
  readonly text: string
  readonly format?: "plain" | "markdown"
}
export interface Stat {
  readonly label: string
  readonly value: string
}
export interface StatBlock extends Stat {
  readonly type: "stat"
}
export interface StatGroupBlock {
  readonly type: "statGroup"
  readonly stats: ReadonlyArray<Stat>
}
export interface ListItem {
  readonly title: string
  readonly subtitle?: string
  readonly href?: string
  readonly badge?: string
}
export interface ListBlock {
  readonly type: "list"
  readonly items: ReadonlyArray<ListItem>
}
export interface TableColumn {
  readonly key: string
  readonly label: string
}
export interface TableBlock {
  readonly type: "table"
  readonly columns: ReadonlyArray<TableColumn>
  /** Cells by column key (text), plus an optional `href` that opens the row. */
  readonly rows: ReadonlyArray<Readonly<Record<string, string>>>
}
export type FieldType = "text" | "textarea" | "select" | "email"
export interface FormField {
  readonly name: string
  readonly label: string
  readonly type: FieldType
  readonly required?: boolean
  readonly options?: ReadonlyArray<{ readonly value: string; readonly label: string }>
}
export interface FormBlock {
  readonly type: "form"
  readonly id: string
  readonly fields: ReadonlyArray<FormField>
  readonly submit: { readonly label: string; readonly actionId: string }
}
export interface PageAction {
  readonly actionId: string
  readonly label: string
  readonly style?: "primary" | "danger" | "default"
  readonly description?: string
  /** A question the renderer asks before it posts the action. */
  readonly confirm?: string
}
export interface ActionRowBlock {
  readonly type: "actionRow"
  /** What the row's buttons are, for assistive technology (default "Actions"). */
  readonly label?: string
  readonly actions: ReadonlyArray<PageAction>
}
export interface CalloutBlock {
  readonly type: "callout"
  readonly tone: "info" | "success" | "warning" | "danger"
  readonly text: string
}
export interface TabsBlock {
  readonly type: "tabs"
  readonly tabs: ReadonlyArray<{ readonly label: string; readonly blocks: ReadonlyArray<Block> }>
}
export interface Card {
  readonly title: string
  readonly text?: string
  readonly href?: string
}
export interface CardsBlock {
  readonly type: "cards"
  readonly cards: ReadonlyArray<Card>
}

export type Block =
  | HeadingBlock
  | TextBlock
  | StatBlock
  | StatGroupBlock
  | ListBlock
  | TableBlock
  | FormBlock
  | ActionRowBlock
  | CalloutBlock
  | TabsBlock
  | CardsBlock
  | ChartBlock

export type { ChartBlock } from "./ChartBlock.ts"

export interface PageDocument {
  readonly id: string
  readonly title: string
  readonly description?: string
  readonly blocks: ReadonlyArray<Block>
}

const StatSchema = { label: Text, value: Text }

const HeadingSchema = Schema.Struct({
  type: Schema.Literal("heading"),
  text: Text,
  level: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 6 })))
})
const TextSchema = Schema.Struct({
  type: Schema.Literal("text"),
  text: Text,
  format: Schema.optionalKey(Schema.Literals(["plain", "markdown"]))
})
const StatBlockSchema = Schema.Struct({ type: Schema.Literal("stat"), ...StatSchema })
const StatGroupSchema = Schema.Struct({
  type: Schema.Literal("statGroup"),
  stats: Schema.Array(Schema.Struct(StatSchema))
})
const ListSchema = Schema.Struct({
  type: Schema.Literal("list"),
  items: Schema.Array(
    Schema.Struct({
      title: Text,
      subtitle: Schema.optionalKey(Text),
      href: Schema.optionalKey(WorkspaceHref),
      badge: Schema.optionalKey(Text)
    })
  )
})
const TableSchema = Schema.Struct({
  type: Schema.Literal("table"),
  columns: Schema.Array(Schema.Struct({ key: Text, label: Text })),
  rows: Schema.Array(Schema.Record(Schema.String, Text))
}).check(
  Schema.makeFilter((table) =>
    table.rows.every((row) => row["href"] === undefined || Schema.is(WorkspaceHref)(row["href"]))
      ? true
      : "a row's href must be workspace-relative"
  )
)
const FormSchema = Schema.Struct({
  type: Schema.Literal("form"),
  id: Text,
  fields: Schema.Array(
    Schema.Struct({
      name: Text,
      label: Text,
      type: Schema.Literals(["text", "textarea", "select", "email"]),
      required: Schema.optionalKey(Schema.Boolean),
      options: Schema.optionalKey(Schema.Array(Schema.Struct({ value: Text, label: Text })))
    })
  ),
  submit: Schema.Struct({ label: Text, actionId: ActionId })
})
const ActionRowSchema = Schema.Struct({
  type: Schema.Literal("actionRow"),
  label: Schema.optionalKey(Text),
  actions: Schema.Array(
    Schema.Struct({
      actionId: ActionId,
      label: Text,
      style: Schema.optionalKey(Schema.Literals(["primary", "danger", "default"])),
      description: Schema.optionalKey(Text),
      confirm: Schema.optionalKey(Text)
    })
  )
})
const CalloutSchema = Schema.Struct({
  type: Schema.Literal("callout"),
  tone: Schema.Literals(["info", "success", "warning", "danger"]),
  text: Text
})
const TabsSchema = Schema.Struct({
  type: Schema.Literal("tabs"),
  tabs: Schema.Array(
    Schema.Struct({ label: Text, blocks: Schema.Array(Schema.suspend((): Schema.Codec<Block> => BlockSchema)) })
  )
})
const CardsSchema = Schema.Struct({
  type: Schema.Literal("cards"),
  cards: Schema.Array(
    Schema.Struct({ title: Text, text: Schema.optionalKey(Text), href: Schema.optionalKey(WorkspaceHref) })
  )
})

export const BlockSchema: Schema.Codec<Block> = Schema.Union([
  HeadingSchema,
  TextSchema,
  StatBlockSchema,
  StatGroupSchema,
  ListSchema,
  TableSchema,
  FormSchema,
  ActionRowSchema,
  CalloutSchema,
  TabsSchema,
  CardsSchema,
  ChartBlockSchema
])

/** A page document as our services produce it: every block one of the known shapes. */
export const PageDocument: Schema.Codec<PageDocument> = Schema.Struct({
  id: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(512)),
  title: Text,
  description: Schema.optionalKey(Text),
  blocks: Schema.Array(BlockSchema)
}).annotate({ identifier: "PageDocument" })

/**
 * A page document as the hub accepts it from any registered service: the document's own fields checked,
 * each block an object with a `type` and further properties left to the renderer (which skips unknown
 * types). What a third-party service sends is relayed, never trusted beyond this shape.
 */
export const PageDocumentLoose = Schema.Struct({
  id: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(512)),
  title: Schema.String,
  description: Schema.optionalKey(Schema.String),
  blockVersion: Schema.optionalKey(Schema.Literal("v1")),
  blocks: Schema.Array(
    Schema.Record(Schema.String, Schema.Unknown).check(
      Schema.makeFilter((block) => typeof block["type"] === "string" || "every block needs a type")
    )
  )
})

/** An entry of a service's page list. */
export const PageEntry = Schema.Struct({
  id: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(512)),
  title: Schema.String,
  icon: Schema.String,
  order: Schema.Number
}).annotate({ identifier: "PageEntry" })
export type PageEntry = typeof PageEntry.Type

/** What an action answers: `refresh` asks the renderer to load the page again; `redirect` names another page. */
export const ActionResult = Schema.Struct({
  result: Schema.Literal("ok"),
  refresh: Schema.Boolean,
  redirect: Schema.optionalKey(WorkspaceHref),
  message: Schema.optionalKey(Schema.String),
  /** A credential issued by the action (a new key), shown once. */
  secret: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "ActionResult" })
export type ActionResult = typeof ActionResult.Type
