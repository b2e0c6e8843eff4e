import { Schema } from "effect"
import { Hub } from "./Limits.ts"

/** Document 1, "Manifest", first-party shape. */
export const Tier = Schema.Literals(["free", "hourly", "monthly"])
export type Tier = typeof Tier.Type

export const ContractVersion = Schema.Literal("v1")

export const Manifest = Schema.Struct({
  service: Schema.String,
  displayName: Schema.String,
  tagline: Schema.optional(Schema.String.check(Schema.isMaxLength(Hub.manifestTaglineMax))),
  contractVersion: ContractVersion,
  requiredTier: Tier,
  addOn: Schema.optional(Schema.Boolean),
  workspaceRoute: Schema.optional(Schema.String.check(Schema.isStartingWith("/"))),
  capabilities: Schema.optional(
    Schema.Struct({
      summary: Schema.optional(Schema.Boolean),
      activity: Schema.optional(Schema.Boolean),
      search: Schema.optional(Schema.Boolean),
      notifications: Schema.optional(Schema.Boolean),
      deepLinks: Schema.optional(Schema.Boolean),
      pages: Schema.optional(Schema.Boolean),
      embed: Schema.optional(Schema.NullOr(Schema.Struct({ url: Schema.String })))
    })
  ),
  emittedEvents: Schema.optional(Schema.Array(Schema.String)),
  consumesFacts: Schema.optional(Schema.Array(Schema.String)),
  webhook: Schema.optional(Schema.Struct({ retrySchedule: Schema.Array(Schema.Int) }))
}).annotate({ identifier: "Manifest" })
export type Manifest = typeof Manifest.Type

export const VersionInfo = Schema.Struct({
  service: Schema.optional(Schema.String),
  contractVersion: Schema.optional(Schema.String),
  build: Schema.optional(Schema.String)
}).annotate({ identifier: "VersionInfo" })
export type VersionInfo = typeof VersionInfo.Type
