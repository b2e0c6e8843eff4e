import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Data } from "../../../core/kernel/index.ts"
import { ActionResult, PageDocumentLoose, PageEntry } from "../../../core/kernel/PageDocument.ts"
import { IdempotencyKeyOptional } from "../ContractHeaders.ts"
import { ErrorResponses as E } from "../ErrorSchemas.ts"
import { facts } from "./UniformApi.ts"

/**
 * Where the operations of the uniform service contract are served: at each service's own base URL, not at
 * the hub's (an operation's `servers` overrides the document's).
 */
const atEachService = OpenApi.annotations({
  override: {
    servers: [
      {
        url: "{serviceUrl}",
        description: "The service's base URL, as registered at the hub",
        variables: { serviceUrl: { default: "http://127.0.0.1:4001", description: "A service's base URL" } }
      }
    ]
  }
})

/** AUTH-1 (the service's own API key header, such as `X-Decisions-Api-Key`) and AUTH-4. */
const subjectHeaders = {
  "x-workspace-token": Schema.String.annotate({
    description: "An identity token the hub minted for the person (AUTH-4), audience the service's id"
  })
}

const Loose = Schema.Record(Schema.String, Schema.Unknown)
const reads = [E.unauthorized, E.rateLimited, E.unavailable]

const auth = "With the service's API key header (AUTH-1) and `X-Workspace-Token` (AUTH-4)."

/**
 * The uniform service contract that the first-party services implement beside health, ready, manifest and
 * version (which the hub serves too): a person's summary, activity, search and pages, page actions, and the
 * hub's facts. A contract for the documents only: the hub publishes it with its own routes, and each service
 * serves the part it implements (its own document says which).
 */
export const ServiceContractGroup = HttpApiGroup.make("serviceContract")
  .add(
    HttpApiEndpoint.get("summary", "/api/v1/summary", { headers: subjectHeaders, success: Data(Loose), error: reads })
      .annotate(OpenApi.Description, `The acting person's summary. ${auth}`)
      .annotateMerge(atEachService),
    HttpApiEndpoint.get("activity", "/api/v1/activity", { headers: subjectHeaders, success: Data(Loose), error: reads })
      .annotate(OpenApi.Description, `The acting person's recent activity. ${auth}`)
      .annotateMerge(atEachService),
    HttpApiEndpoint.get("search", "/api/v1/search", {
      headers: subjectHeaders,
      query: { q: Schema.String },
      success: Data(Loose),
      error: [E.badRequest, ...reads]
    })
      .annotate(OpenApi.Description, `Scored hits for \`q\`, scoped to the acting person. ${auth}`)
      .annotateMerge(atEachService),
    HttpApiEndpoint.get("pages", "/api/v1/pages", {
      headers: subjectHeaders,
      success: Data(Schema.Struct({ pages: Schema.Array(PageEntry) })),
      error: reads
    })
      .annotate(OpenApi.Description, `The pages the service shows the person in the workspace. ${auth}`)
      .annotateMerge(atEachService),
    HttpApiEndpoint.get("page", "/api/v1/pages/:id", {
      params: { id: Schema.String },
      headers: subjectHeaders,
      success: Data(Schema.Struct({ page: PageDocumentLoose })),
      error: [E.notFound, ...reads]
    })
      .annotate(OpenApi.Description, `One page document; unknown block types are skipped. ${auth}`)
      .annotateMerge(atEachService),
    HttpApiEndpoint.post("action", "/api/v1/actions/:actionId", {
      params: { actionId: Schema.String },
      headers: { ...subjectHeaders, ...IdempotencyKeyOptional },
      payload: Loose,
      success: Data(ActionResult),
      error: [E.badRequest, E.notFound, E.conflict, ...reads]
    })
      .annotate(OpenApi.Description, `Runs an action a page offered; honours \`Idempotency-Key\`. ${auth}`)
      .annotateMerge(atEachService),
    facts.annotateMerge(atEachService)
  )
  .annotateMerge(
    OpenApi.annotations({
      title: "Uniform service contract",
      description:
        "What every first-party service implements at its own base URL, called by the hub: summary, activity, " +
        "search, pages and actions with the service's API key and a person's identity token; facts signed with " +
        "the service's signing key (AUTH-2)."
    })
  )
