import { Effect, Layer } from "effect"
import { ProducerOutbox } from "../../../core/events/ProducerOutbox.ts"
import { FactOutbox } from "../../../core/hub/HubFacts.ts"
import { ProducerOutboxSql } from "../ProducerOutboxSql.ts"

/** The hub's fact outbox over `hub.fact_outbox` (0017_fact_outbox.ts): a producer outbox of the hub's own. */
export const FactOutboxSql = Layer.effect(FactOutbox, Effect.service(ProducerOutbox)).pipe(
  Layer.provide(ProducerOutboxSql({ schema: "hub", table: "fact_outbox" }))
)
