import { Context, Effect } from "effect"
import type { Unavailable } from "./Errors.ts"

/** Whether a service can serve traffic now. */
export class Readiness extends Context.Service<
  Readiness,
  {
    readonly check: Effect.Effect<void, Unavailable>
  }
>()("core/kernel/Readiness") {}
