import { HttpApi, OpenApi } from "effect/http-api"
import { reportAllIssues } from "../ParseOptions.ts"
import { DecisionsUniformGroup } from "../uniform/UniformApi.ts"

/** The decisions service's contract (document 2). */
export class DecisionsApi extends HttpApi.make("decisions")
  .add(DecisionsUniformGroup)
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(
    OpenApi.annotations({ title: "Decisions service", description: "Document 2: human-in-the-loop decisions" })
  ) {}
