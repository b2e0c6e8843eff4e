import { Effect, Layer } from "effect"
import { ProducerOutbox } from "../../../core/events/ProducerOutbox.ts"
import { FactOutbox } from "../../../core/hub/HubFacts.ts"
import { ProducerOutboxMemory } from "../ProducerOutboxMemory.ts"

/** The hub's fact outbox in memory. */
export const FactOutboxMemory = Layer.effect(FactOutbox, Effect.service(ProducerOutbox)).pipe(
  Layer.provide(ProducerOutboxMemory)
)
