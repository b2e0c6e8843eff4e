import { Schema } from "effect"
import { Hub } from "./Limits.ts"

/** The platform contract, "Manifest", first-party shape. */
export const Tier = Schema.Literals(["free", "hourly", "monthly"])
export type Tier = typeof Tier.Type

export const ContractVersion = Schema.Literal("v1")

export const Manifest = Schema.Struct({
  service: Schema.String,
  displayName: Schema.String,
  tagline: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(Hub.manifestTaglineMax))),
  contractVersion: ContractVersion,
  requiredTier: Tier,
  addOn: Schema.optionalKey(Schema.Boolean),
  workspaceRoute: Schema.optionalKey(Schema.String.check(Schema.isStartingWith("/"))),
  capabilities: Schema.optionalKey(
    Schema.Struct({
      summary: Schema.optionalKey(Schema.Boolean),
      activity: Schema.optionalKey(Schema.Boolean),
      search: Schema.optionalKey(Schema.Boolean),
      notifications: Schema.optionalKey(Schema.Boolean),
      deepLinks: Schema.optionalKey(Schema.Boolean),
      pages: Schema.optionalKey(Schema.Boolean),
      embed: Schema.optionalKey(Schema.NullOr(Schema.Struct({ url: Schema.String })))
    })
  ),
  emittedEvents: Schema.optionalKey(Schema.Array(Schema.String)),
  consumesFacts: Schema.optionalKey(Schema.Array(Schema.String)),
  webhook: Schema.optionalKey(Schema.Struct({ retrySchedule: Schema.Array(Schema.Int) }))
}).annotate({ identifier: "Manifest" })
export type Manifest = typeof Manifest.Type

export const VersionInfo = Schema.Struct({
  service: Schema.optionalKey(Schema.String),
  contractVersion: Schema.optionalKey(Schema.String),
  build: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "VersionInfo" })
export type VersionInfo = typeof VersionInfo.Type
