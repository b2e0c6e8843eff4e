import { Context } from "effect"
import { HttpApiMiddleware } from "effect/http-api"

/** Whose idempotency keys these are: the authenticated caller, provided by each plane's auth middleware. */
export class IdempotencyScope extends Context.Service<IdempotencyScope, string>()("adapters/http/IdempotencyScope") {}

/** A mutation that must carry `Idempotency-Key`: a create, whose unit may share its transaction (`Transactions.shared`). */
export class IdempotencyRequired extends HttpApiMiddleware.Service<
  IdempotencyRequired,
  { requires: IdempotencyScope }
>()("adapters/http/IdempotencyRequired") {}

/** A mutation that honours `Idempotency-Key` when it is sent. */
export class IdempotencyOptional extends HttpApiMiddleware.Service<
  IdempotencyOptional,
  { requires: IdempotencyScope }
>()("adapters/http/IdempotencyOptional") {}

/**
 * A mutation that only creates new rows and honours `Idempotency-Key` when it is sent: where its service allows
 * it (`IdempotencyLayersOptions.sharedCreates`), its unit may share its transaction with others of the same
 * moment (`Transactions.shared`), with or without a key.
 */
export class IdempotencyCreate extends HttpApiMiddleware.Service<IdempotencyCreate, { requires: IdempotencyScope }>()(
  "adapters/http/IdempotencyCreate"
) {}
