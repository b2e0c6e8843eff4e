import { OpenApi } from "effect/http-api"
import { ServiceContractGroup } from "../uniform/ServiceContractApi.ts"
import { HubApi } from "./Api.ts"

/**
 * The whole contract as the hub publishes it at `GET /api/v1/openapi`: the hub's own routes and the uniform
 * service contract (ServiceContractGroup) in one document, each operation of the latter served at a
 * service's base URL. The hub serves `HubApi`; this value only makes the document. Each service still
 * publishes its own document, of the routes it serves.
 */
export const HubContractApi = HubApi.add(ServiceContractGroup).annotateMerge(
  OpenApi.annotations({
    title: "Platform hub and uniform service contract",
    description: "The hub's routes, and the uniform contract every first-party service implements at its own base URL."
  })
)
