import { Layer } from "effect"
import { Identity } from "../../core/hub/Identity.ts"
import { Registry } from "../../core/hub/Registry.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"

export interface HubDirectorySettings {
  /** HUB_SECRETS_KEY seals services' credentials; unset, the registry fails closed (nothing is registered). */
  readonly secretsKey: string | undefined
  /** Services on http to loopback (outside production). */
  readonly allowLoopbackHttp: boolean
}

/**
 * The hub's directory use cases, the one composition the bundled server, the seed and the tests use:
 * organizations, people, memberships and installations (`Identity`) and the service registry (`Registry`),
 * over the data adapters given (the directory and service stores, memory or SQL; also provided). The hub's
 * other use cases (workspace, conformance, events, sign-in) run over it.
 */
export const HubDirectoryUseCases = <Data, E, R>(settings: HubDirectorySettings, data: Layer.Layer<Data, E, R>) =>
  Layer.merge(Identity.layer, Registry.layer(settings)).pipe(Layer.provideMerge(Layer.merge(data, IdGeneratorUlid)))
