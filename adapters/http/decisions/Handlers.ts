import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { uniformHandlers, type UniformConfig } from "../uniform/UniformHandlers.ts"
import { DecisionsApi } from "./Api.ts"

export const DecisionsUniformHandlers = (config: UniformConfig) =>
  HttpApiBuilder.group(DecisionsApi, "uniform", (handlers) =>
    Effect.map(uniformHandlers(config), (h) => handlers.handleAll(h))
  )
