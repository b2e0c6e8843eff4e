import { HttpApi, OpenApi } from "effect/http-api"
import { reportAllIssues } from "../ParseOptions.ts"
import { UniformGroup } from "../uniform/UniformApi.ts"

/** The hub's contract (document 1). Further groups join it issue by issue. */
export class HubApi extends HttpApi.make("hub")
  .add(UniformGroup)
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(
    OpenApi.annotations({ title: "Platform hub", description: "Document 1: the hub and the uniform service contract" })
  ) {}
