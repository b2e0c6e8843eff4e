import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { uniformHandlers, type UniformConfig } from "../uniform/UniformHandlers.ts"
import { TasksApi } from "./Api.ts"

export const TasksUniformHandlers = (config: UniformConfig) =>
  HttpApiBuilder.group(TasksApi, "uniform", (handlers) =>
    Effect.map(uniformHandlers(config), (h) => handlers.handleAll(h))
  )
