import { Effect } from "effect"
import { Conformance } from "../../../core/hub/Conformance.ts"
import { hubErrorResponse } from "../ErrorResponse.ts"

/**
 * The handlers of the conformance group (ConformanceApi.ts), as the uniform group's are: an object for
 * `handlers.handleAll` in `HttpApiBuilder.group(<the API holding the group>, "conformance", ...)`. Needs
 * `Conformance`; the `HubAdminAuth` middleware is provided where the API is served.
 */
export const conformanceHandlers = Effect.map(Conformance, (conformance) => ({
  run: ({ params }: { readonly params: { readonly id: string } }) =>
    conformance.run(params.id).pipe(
      Effect.map((data) => ({ data })),
      Effect.catch(hubErrorResponse)
    ),
  latest: ({ params }: { readonly params: { readonly id: string } }) =>
    conformance.latest(params.id).pipe(
      Effect.map((data) => ({ data })),
      Effect.catch(hubErrorResponse)
    )
}))
