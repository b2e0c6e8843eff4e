import { Layer, type Redacted } from "effect"
import { GuardedHttpClient } from "../../../adapters/http/GuardedHttpClient.ts"
import { ExpertRosterHttp } from "../../../adapters/http/hub/ExpertRosterHttp.ts"
import { RecordingAccessHttp } from "../../../adapters/http/hub/RecordingAccessHttp.ts"
import { ServiceReadsHttp } from "../../../adapters/http/hub/ServiceReadsHttp.ts"
import { ShortenerHttp } from "../../../adapters/http/hub/ShortenerHttp.ts"
import { ExpertRosterCached, ExpertRosterUnconfigured } from "../../../core/hub/ExpertRoster.ts"
import { ShortenerOwn } from "../../../core/hub/ShortLinks.ts"

export interface HubServiceDataSettings {
  /** Where people reach the hub (`HUB_PUBLIC_URL`): the origin of the hub's own short links. */
  readonly publicUrl: string
  /** `HUB_EXPERT_ROSTER_URL` and `HUB_EXPERT_ROSTER_KEY`; without both, every engineer has no matched clients. */
  readonly expertRoster: { readonly url: string; readonly key: Redacted.Redacted<string> } | undefined
  /** `HUB_SHORTENER_URL`: an external link shortener; unset, the hub shortens with its own `/s/{code}` links. */
  readonly shortenerUrl: string | undefined
  /** Registered services on loopback addresses may be called (outside production). */
  readonly allowLoopback: boolean
}

/**
 * The upstreams of the hub's service-data plane (docs/hub.md): the expert roster (read at most once a minute
 * per instance), the link shortener, the recordings service's playback access and the products' reads. Needs the hub's
 * `ShortLinkStore` and `Transactions`.
 */
export const HubServiceDataUpstreams = (settings: HubServiceDataSettings) =>
  Layer.mergeAll(
    // Registered services are called as the workspace calls them: never at a private address in production.
    Layer.merge(RecordingAccessHttp(), ServiceReadsHttp()).pipe(
      Layer.provide(GuardedHttpClient({ allowLoopback: settings.allowLoopback }))
    ),
    settings.expertRoster === undefined
      ? ExpertRosterUnconfigured
      : ExpertRosterCached().pipe(Layer.provide(ExpertRosterHttp(settings.expertRoster))),
    settings.shortenerUrl === undefined
      ? ShortenerOwn(settings.publicUrl)
      : ShortenerHttp({ url: settings.shortenerUrl })
  )
