import { HttpApi, OpenApi } from "effect/http-api"
import { reportAllIssues } from "../ParseOptions.ts"
import { TasksUniformGroup } from "../uniform/UniformApi.ts"

/** The task inbox service's contract (document 3). */
export class TasksApi extends HttpApi.make("tasks")
  .add(TasksUniformGroup)
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(
    OpenApi.annotations({ title: "Task inbox service", description: "Document 3: tasks, triage and proposals" })
  ) {}
