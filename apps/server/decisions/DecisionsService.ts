import { Layer } from "effect"
import type { InProcessHub } from "../ProducerRelayRuntime.ts"
import type { ServiceSettings } from "../Services.ts"
import { DecisionsUseCases, type DecisionsAdapters, type DecisionsSettings } from "./DecisionsLayers.ts"
import { decisionsRoutes } from "./DecisionsRoutes.ts"
import { DecisionsBackground, type DecisionsWorkerSettings } from "./DecisionsRuntime.ts"

/** Everything the decisions service is configured with: its routes', its use cases' and its workers' settings. */
export interface DecisionsServiceSettings {
  /** The keys and budgets its routes answer with, and the workspace's address (`workspaceUrl`). */
  readonly routes: ServiceSettings
  readonly useCases: DecisionsSettings
  /** Unset: no worker runs (a test of the routes alone). */
  readonly workers?: DecisionsWorkerSettings | undefined
}

/** What the decisions service runs over: its data, the ways out of the process, and how events reach the hub. */
export interface DecisionsServiceAdapters<Data, E, R, UE, UR, PE, PR> extends DecisionsAdapters<Data, E, R, UE, UR> {
  /**
   * Hands events to a hub in the same process; unset, the relay posts them to `workers.relay.hubUrl`, signed.
   */
  readonly hubPublisher?: InProcessHub<PE, PR> | undefined
}

/**
 * The decisions service as one layer: its routes (both HTTP planes, the pages plane and the MCP endpoint) and
 * its workers (DecisionsRuntime.ts), over its use cases (DecisionsLayers.ts), over the data given
 * (`DecisionsDataMemory`, or `DecisionsDataMigrated` on the embedded database or a Postgres server). The
 * bundled server puts it on its listener; tests serve it on a loopback port. Its use cases and data are
 * provided too, for the tests' own reads. Needs the database's `Transactions` (or the memory data's own),
 * `Readiness` and `RateLimits`.
 */
export const DecisionsService = <Data, E, R, UE = never, UR = never, PE = never, PR = never>(
  settings: DecisionsServiceSettings,
  adapters: DecisionsServiceAdapters<Data, E, R, UE, UR, PE, PR>
) =>
  DecisionsServing(settings, adapters.hubPublisher).pipe(
    Layer.provideMerge(DecisionsUseCases(settings.useCases, adapters))
  )

/**
 * The routes and workers of `DecisionsService` over use cases built elsewhere: for tests that build the use
 * cases themselves (once for several servers, or to read their stores).
 */
export const DecisionsServing = <PE = never, PR = never>(
  settings: Pick<DecisionsServiceSettings, "routes" | "workers">,
  hubPublisher?: InProcessHub<PE, PR> | undefined
) =>
  Layer.merge(
    decisionsRoutes(settings.routes),
    settings.workers === undefined ? Layer.empty : DecisionsBackground(settings.workers, hubPublisher)
  )
