import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { uniformHandlers, type UniformConfig } from "../uniform/UniformHandlers.ts"
import { HubApi } from "./Api.ts"

export const HubUniformHandlers = (config: UniformConfig) =>
  HttpApiBuilder.group(HubApi, "uniform", (handlers) =>
    Effect.map(uniformHandlers(config), (h) => handlers.handleAll(h))
  )
