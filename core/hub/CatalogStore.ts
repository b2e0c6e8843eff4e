import { Context, type Effect } from "effect"

/**
 * One entry of the event catalog: a type, the producer service the catalog
 * assigns it to, whether it is a notification, and the JSON Schema its `data` must satisfy. `version` is
 * bumped by every upsert, so compiled validators are cached per type and version.
 */
export interface EventCatalogEntry {
  readonly type: string
  readonly producer: string
  readonly isNotification: boolean
  /** A JSON Schema (draft-07 keywords, plus `$defs`) as plain JSON; core/hub/EventCatalog.ts compiles it. */
  readonly dataSchema: Readonly<Record<string, unknown>>
  readonly version: number
  readonly updatedAt: string
}

export type CatalogEntryInput = Omit<EventCatalogEntry, "version">

/** The catalog port. Infrastructure failures are defects. */
export class CatalogStore extends Context.Service<
  CatalogStore,
  {
    /** Inserts the type, or replaces its producer, flag and schema; answers the stored entry (version bumped). */
    readonly upsert: (entry: CatalogEntryInput) => Effect.Effect<EventCatalogEntry>
    /** Inserts the type only when it is absent; answers true when inserted. */
    readonly insertIfAbsent: (entry: CatalogEntryInput) => Effect.Effect<boolean>
    readonly find: (type: string) => Effect.Effect<EventCatalogEntry | undefined>
    /** Every entry, or only the producer's, ordered by type. */
    readonly list: (producer?: string | undefined) => Effect.Effect<ReadonlyArray<EventCatalogEntry>>
  }
>()("core/hub/CatalogStore") {}
