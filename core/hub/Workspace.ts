import { Context, Effect, Layer, Schema } from "effect"
import { Forbidden, NotFound, UpstreamError, type NotConfigured, type ValidationError } from "../kernel/Errors.ts"
import { ActionResult, PageDocumentLoose, PageEntry, WorkspaceHref } from "../kernel/PageDocument.ts"
import { Directory, orgStatus, type Installation } from "./Directory.ts"
import { IdentityTokens } from "./IdentityTokens.ts"
import { Registry } from "./Registry.ts"
import type { ProbeAnswer, ProbeFailed, ProbeRequest } from "./ServiceProbe.ts"
import type { RegisteredService } from "./ServiceStore.ts"

/**
 * How the hub calls a service on a person's behalf (pages and actions): one request, bounded in time and in
 * what it reads, never following a redirect. The same shape as the conformance probe, with its own limits.
 */
export class ServiceCalls extends Context.Service<
  ServiceCalls,
  { readonly send: (request: ProbeRequest) => Effect.Effect<ProbeAnswer, ProbeFailed> }
>()("core/hub/ServiceCalls") {}

/** The person the workspace acts for (from their hub session). */
export interface WorkspacePerson {
  readonly userId: string
  readonly email: string
}

/** An app in the person's workspace: a live service one of their organizations installed. */
export interface WorkspaceApp {
  readonly id: string
  readonly name: string
  readonly pages: boolean
  readonly embedUrl: string | null
  /** The app's own web app, which the workspace links to (the person signs in there through the hub). */
  readonly appUrl: string | null
}

/** The organization did not consent to embedding this app full page (403 EMBED_NOT_CONSENTED). */
export class EmbedNotConsented extends Schema.TaggedError<EmbedNotConsented>()("EmbedNotConsented", {}) {}

/**
 * The service refused the person's request with a 4xx of its own (a field it did not accept, a move not
 * allowed now, a page that is not there). The workspace shows the refusal; `code` and `message` are the
 * service's words, checked for shape and length only.
 */
export class ServiceRefused extends Schema.TaggedError<ServiceRefused>()("ServiceRefused", {
  status: Schema.Number,
  code: Schema.String,
  message: Schema.String,
  details: Schema.optionalKey(Schema.Unknown)
}) {}

export type WorkspaceError = NotFound | Forbidden | UpstreamError | ServiceRefused | NotConfigured | ValidationError

const upstream = () => new UpstreamError({ message: "The app did not answer as expected. Try again later." })
const noSuchApp = () => new NotFound({ message: "No such app." })

// Statuses a service's refusal keeps; anything else (401 included: the hub's own credentials) is upstream.
const relayed = new Set([400, 403, 404, 409, 413, 422, 429])
const codePattern = /^[A-Za-z][A-Za-z0-9_]{0,63}$/

const ErrorBody = Schema.Struct({
  error: Schema.Struct({
    code: Schema.String,
    message: Schema.optionalKey(Schema.String),
    details: Schema.optionalKey(Schema.Unknown)
  })
})

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** A service's 4xx as a refusal the workspace may show, or an upstream failure when it is not one. */
const refusalOf = (answer: ProbeAnswer): ServiceRefused | UpstreamError => {
  if (!relayed.has(answer.status) || answer.truncated) return upstream()
  const body = Schema.decodeUnknownOption(ErrorBody)(parseJson(answer.body))
  const code = body._tag === "Some" && codePattern.test(body.value.error.code) ? body.value.error.code : "REFUSED"
  const message =
    body._tag === "Some" && body.value.error.message !== undefined
      ? body.value.error.message.slice(0, 500)
      : "The app refused the request."
  const details = body._tag === "Some" ? body.value.error.details : undefined
  const small = details !== undefined && JSON.stringify(details).length <= 4096
  return new ServiceRefused({ status: answer.status, code, message, ...(small ? { details } : {}) })
}

/** Decodes the `data` of a service's 200 answer, or fails as upstream. */
const dataOf = <A>(
  schema: Schema.Decoder<A>,
  answer: ProbeAnswer
): Effect.Effect<A, ServiceRefused | UpstreamError> => {
  if (answer.status !== 200) return Effect.fail(refusalOf(answer))
  if (answer.truncated) return Effect.fail(upstream())
  const decoded = Schema.decodeUnknownOption(Schema.Struct({ data: schema }))(parseJson(answer.body))
  return decoded._tag === "Some" ? Effect.succeed(decoded.value.data) : Effect.fail(upstream())
}

const PageList = Schema.Struct({ pages: Schema.Array(PageEntry) })
const PageAnswer = Schema.Struct({ page: PageDocumentLoose })
// What a third-party action answers is kept to the documented fields; a redirect elsewhere is dropped.
const ActionAnswer = Schema.Struct({
  result: Schema.String,
  refresh: Schema.optionalKey(Schema.Boolean),
  redirect: Schema.optionalKey(Schema.String),
  message: Schema.optionalKey(Schema.String),
  secret: Schema.optionalKey(Schema.String)
})

/** One path segment the hub may put after `/pages/` or `/actions/`: never `.` or `..`, which would leave it. */
const isSegment = (id: string): boolean => /^[A-Za-z0-9._~-]{1,512}$/.test(id) && !/^\.{1,2}$/.test(id)

/**
 * The hub's workspace: the apps a person's organizations installed, and their pages and actions fetched
 * from each service with the service's API key and an identity token minted for the person (audience the
 * service, scoped to the organization that installed it). Embedding hands the person's browser the embed
 * URL with a fresh token as `wt`, when the organization consented.
 */
export class Workspace extends Context.Service<
  Workspace,
  {
    readonly apps: (person: WorkspacePerson) => Effect.Effect<ReadonlyArray<WorkspaceApp>>
    readonly pages: (
      person: WorkspacePerson,
      serviceId: string
    ) => Effect.Effect<ReadonlyArray<PageEntry>, WorkspaceError>
    readonly page: (
      person: WorkspacePerson,
      serviceId: string,
      pageId: string,
      query: string
    ) => Effect.Effect<typeof PageDocumentLoose.Type, WorkspaceError>
    readonly act: (
      person: WorkspacePerson,
      serviceId: string,
      actionId: string,
      values: unknown,
      idempotencyKey: string | undefined
    ) => Effect.Effect<ActionResult, WorkspaceError>
    readonly embed: (
      person: WorkspacePerson,
      serviceId: string
    ) => Effect.Effect<{ readonly url: string }, WorkspaceError | EmbedNotConsented>
  }
>()("core/hub/Workspace") {
  static readonly layer = Layer.effect(
    Workspace,
    Effect.gen(function* () {
      const directory = yield* Directory
      const registry = yield* Registry
      const tokens = yield* IdentityTokens
      const calls = yield* ServiceCalls

      /** Each live service installed by one of the person's active organizations, with the first such organization. */
      const installed = Effect.fnUntraced(function* (person: WorkspacePerson) {
        const memberships = (yield* directory.membershipsOf(person.userId)).filter((m) => orgStatus(m.org) === "active")
        const found = new Map<string, { readonly installation: Installation; readonly service: RegisteredService }>()
        for (const { org } of memberships) {
          for (const installation of yield* directory.installationsOf(org.id)) {
            if (!installation.active || found.has(installation.serviceId)) continue
            const service = yield* Effect.orElseSucceed(registry.find(installation.serviceId), () => undefined)
            if (service === undefined || service.status !== "live") continue
            found.set(installation.serviceId, { installation, service })
          }
        }
        return found
      })

      const appOf = Effect.fnUntraced(function* (person: WorkspacePerson, serviceId: string) {
        const app = (yield* installed(person)).get(serviceId)
        if (app === undefined) return yield* noSuchApp()
        return app
      })

      /** The service's API key and header, and a token for the person in the installing organization. */
      const credentialsFor = Effect.fnUntraced(function* (
        person: WorkspacePerson,
        app: { readonly installation: Installation; readonly service: RegisteredService }
      ) {
        const registered = yield* registry.credentials(app.service.id)
        if (registered === undefined) return yield* noSuchApp()
        const minted = yield* Effect.catchTag(
          tokens.mintFor({ service: app.service.id, email: person.email, companyId: app.installation.orgId }),
          "NotFound",
          () => Effect.fail(noSuchApp())
        )
        return { apiKey: registered.credentials.apiKey, token: minted.token }
      })

      const call = Effect.fnUntraced(function* (
        person: WorkspacePerson,
        serviceId: string,
        request: {
          readonly method: "GET" | "POST"
          readonly path: string
          readonly body?: string | undefined
          readonly headers?: Readonly<Record<string, string>> | undefined
        }
      ) {
        const app = yield* appOf(person, serviceId)
        if (app.service.pages !== true) return yield* noSuchApp()
        const { apiKey, token } = yield* credentialsFor(person, app)
        return yield* calls
          .send({
            method: request.method,
            url: `${app.service.baseUrl}${request.path}`,
            headers: {
              accept: "application/json",
              [app.service.apiKeyHeader.toLowerCase()]: apiKey,
              "x-workspace-token": token,
              ...(request.body === undefined ? {} : { "content-type": "application/json" }),
              ...request.headers
            },
            body: request.body,
            operatorConfigured: app.service.firstParty
          })
          .pipe(Effect.mapError(() => upstream()))
      })

      return Workspace.of({
        apps: Effect.fn("Workspace.apps")(function* (person: WorkspacePerson) {
          const preferences = yield* directory.preferences(person.userId)
          return [...(yield* installed(person)).values()]
            .filter(({ service }) => preferences.serviceVisible[service.id] !== false)
            .map(({ service }) => ({
              id: service.id,
              name: service.displayName,
              pages: service.pages === true,
              embedUrl: service.embedUrl ?? null,
              appUrl: service.appUrl ?? null
            }))
            .sort((a, b) => a.name.localeCompare(b.name))
        }),

        pages: Effect.fn("Workspace.pages")(function* (person: WorkspacePerson, serviceId: string) {
          const answer = yield* call(person, serviceId, { method: "GET", path: "/api/v1/pages" })
          return (yield* dataOf(PageList, answer)).pages
        }),

        page: Effect.fn("Workspace.page")(function* (
          person: WorkspacePerson,
          serviceId: string,
          pageId: string,
          query: string
        ) {
          if (!isSegment(pageId)) return yield* new NotFound({ message: "No such page." })
          const search = new URLSearchParams(query).toString()
          const answer = yield* call(person, serviceId, {
            method: "GET",
            path: `/api/v1/pages/${pageId}${search === "" ? "" : `?${search}`}`
          })
          return (yield* dataOf(PageAnswer, answer)).page
        }),

        act: Effect.fn("Workspace.act")(function* (
          person: WorkspacePerson,
          serviceId: string,
          actionId: string,
          values: unknown,
          idempotencyKey: string | undefined
        ) {
          if (!isSegment(actionId)) return yield* new NotFound({ message: "No such action." })
          const answer = yield* call(person, serviceId, {
            method: "POST",
            path: `/api/v1/actions/${actionId}`,
            body: JSON.stringify(values ?? {}),
            headers: idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }
          })
          const result = yield* dataOf(ActionAnswer, answer)
          if (result.result !== "ok") return yield* upstream()
          const redirect =
            result.redirect !== undefined && Schema.is(WorkspaceHref)(result.redirect) ? result.redirect : undefined
          return {
            result: "ok",
            refresh: result.refresh ?? true,
            ...(redirect === undefined ? {} : { redirect }),
            ...(result.message === undefined ? {} : { message: result.message.slice(0, 500) }),
            ...(result.secret === undefined ? {} : { secret: result.secret })
          } satisfies ActionResult
        }),

        embed: Effect.fn("Workspace.embed")(function* (person: WorkspacePerson, serviceId: string) {
          const app = yield* appOf(person, serviceId)
          const embedUrl = app.service.embedUrl
          if (embedUrl === undefined) return yield* new NotFound({ message: "This app cannot be embedded." })
          if (!app.installation.consents.embed) return yield* new EmbedNotConsented()
          const { token } = yield* credentialsFor(person, app)
          const url = new URL(embedUrl)
          url.searchParams.set("wt", token)
          return { url: url.href }
        })
      })
    })
  )
}
