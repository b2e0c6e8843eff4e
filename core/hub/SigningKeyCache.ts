import { Context, type Effect } from "effect"

/**
 * Producers' signing keys kept between event deliveries, so a delivery neither reads nor opens its
 * producer's sealed key. Whoever provides it must never answer a key past a change of the producer's
 * registration (a rotation, a suspension) on any server instance: adapters/sql/hub/ServiceStoreWithKeyCacheSql.ts
 * drops the key on every instance when the change commits. Only keys are kept, never "no key": an unknown or
 * suspended producer is looked up every time. Without it, ingest reads and opens the key for every delivery.
 */
export class SigningKeyCache extends Context.Service<
  SigningKeyCache,
  {
    /** The kept key of `service`, else what `load` answers (kept when it is a key). */
    readonly get: <E>(
      service: string,
      load: Effect.Effect<string | undefined, E>
    ) => Effect.Effect<string | undefined, E>
  }
>()("core/hub/SigningKeyCache") {}
