import { Context, Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Decisions, type DecisionListPage, type DecisionView } from "../../../core/decisions/Decisions.ts"
import { publicDecision } from "../../../core/decisions/DecisionView.ts"
import { RecordActions } from "../../../core/decisions/RecordActions.ts"
import { Templates } from "../../../core/decisions/Templates.ts"
import { WebhookDeliveries } from "../../../core/decisions/WebhookDeliveries.ts"
import { Webhooks } from "../../../core/decisions/Webhooks.ts"
import { defaultPageLimit } from "../../../core/kernel/Paging.ts"
import { answerDecisions, type DecisionsDomainError } from "../ErrorResponse.ts"
import { ServerDraining } from "../ServiceHttp.ts"
import { factsHandler, uniformHandlers, type UniformConfig } from "../uniform/UniformHandlers.ts"
import { DecisionsApi } from "./Api.ts"
import { answersPerRead } from "./LongPollAnswers.ts"
import { DecisionEnvelope } from "./Schemas.ts"
import { CurrentCaller, CurrentUser } from "./Auth.ts"
import { WorkspaceFlowHandlers } from "./FlowHandlers.ts"
import { PagesHandlers } from "./PagesHandlers.ts"

/**
 * Where people open the workspace (the hub's public address). A decision's create and get answers carry the
 * absolute address of its page there as `url`, so a caller can hand a person a link; unset (the service
 * served without a hub, tests of the API alone), they carry none.
 */
export const WorkspaceAddress = Context.Reference<string | undefined>("adapters/http/decisions/WorkspaceAddress", {
  defaultValue: () => undefined
})

const one = (view: DecisionView, workspace?: string) => ({
  data: { decision: publicDecision(view.decision, { routing: view.routing, workspace }) }
})

/** Detail, choose, decline, route and retry answers carry `actions`. */
const detail = (view: DecisionView, workspace?: string) => ({
  data: { decision: publicDecision(view.decision, { routing: view.routing, actions: true, workspace }) }
})

/** A page of a list, each decision as the contract shows it. */
const listAnswer = (page: DecisionListPage) => ({
  data: {
    decisions: page.items.map((item) => publicDecision(item.decision, { routing: item.routing })),
    ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor })
  }
})

/** Work for the person of the workspace session, its domain failures answered in the decisions envelope. */
const withUser = <A, E extends DecisionsDomainError, R>(f: (user: CurrentUser["Service"]) => Effect.Effect<A, E, R>) =>
  answerDecisions(Effect.flatMap(CurrentUser, f))

export const DecisionsUniformHandlers = (config: UniformConfig) =>
  HttpApiBuilder.group(DecisionsApi, "uniform", (handlers) =>
    Effect.map(Effect.all([uniformHandlers(config), factsHandler("decisions")]), ([h, facts]) =>
      handlers.handleAll({ ...h, facts })
    )
  )

export const CallerHandlers = HttpApiBuilder.group(DecisionsApi, "caller", (handlers) =>
  Effect.gen(function* () {
    const decisions = yield* Decisions
    const workspace = yield* WorkspaceAddress
    const located = (view: DecisionView) => detail(view, workspace)
    const waitAnswer = answersPerRead(DecisionEnvelope, located)
    return handlers.handleAll({
      create: ({ payload }) =>
        answerDecisions(
          Effect.gen(function* () {
            const caller = yield* CurrentCaller
            return one(yield* decisions.create(caller, payload), workspace)
          })
        ),
      get: ({ params, query }) =>
        answerDecisions(
          Effect.gen(function* () {
            const caller = yield* CurrentCaller
            if (query.wait === undefined || query.wait === 0) {
              return located(yield* decisions.get(caller.organizationId, params.id))
            }
            // A long-poll held when the server begins to shut down answers at once, as at the end of its wait.
            // Its waiters share the read of a change, and so its answer, encoded once (LongPollAnswers.ts).
            return waitAnswer(
              yield* decisions.waitForChange(caller.organizationId, params.id, query.wait, yield* ServerDraining)
            )
          })
        ),
      list: ({ query }) =>
        answerDecisions(
          Effect.flatMap(CurrentCaller, (caller) =>
            decisions.listForCaller(caller, {
              statuses: query.status,
              cursor: query.cursor,
              limit: query.limit ?? defaultPageLimit
            })
          ).pipe(Effect.map(listAnswer))
        ),
      infoResponse: ({ params, payload }) =>
        answerDecisions(
          Effect.flatMap(CurrentCaller, (caller) => decisions.answerInfo(caller, params.id, payload)).pipe(
            Effect.map(one)
          )
        ),
      cancel: ({ params }) =>
        answerDecisions(
          Effect.flatMap(CurrentCaller, (caller) => decisions.cancel(caller, params.id)).pipe(Effect.map(one))
        )
    })
  })
)

export const WorkspaceDecisionHandlers = HttpApiBuilder.group(DecisionsApi, "workspaceDecisions", (handlers) =>
  Effect.gen(function* () {
    const decisions = yield* Decisions
    const workspace = yield* WorkspaceAddress
    return handlers.handleAll({
      list: ({ query }) =>
        answerDecisions(
          Effect.flatMap(CurrentUser, (user) =>
            decisions.listForUser(user, query.scope ?? "inbox", {
              statuses: query.status,
              cursor: query.cursor,
              limit: query.limit ?? defaultPageLimit
            })
          ).pipe(Effect.map(listAnswer))
        ),
      get: ({ params }) =>
        answerDecisions(
          Effect.flatMap(CurrentUser, (user) => decisions.get(user.organizationId, params.id)).pipe(
            Effect.map((view) => detail(view, workspace))
          )
        ),
      choose: ({ params, payload }) =>
        answerDecisions(
          Effect.flatMap(CurrentUser, (user) => decisions.choose(user, params.id, payload)).pipe(Effect.map(detail))
        ),
      decline: ({ params, payload }) =>
        answerDecisions(
          Effect.flatMap(CurrentUser, (user) => decisions.decline(user, params.id, payload)).pipe(Effect.map(detail))
        ),
      askInfo: ({ params, payload }) =>
        answerDecisions(
          Effect.flatMap(CurrentUser, (user) => decisions.askInfo(user, params.id, payload.question)).pipe(
            Effect.map(one)
          )
        ),
      route: ({ params, payload }) =>
        answerDecisions(
          Effect.flatMap(CurrentUser, (user) => decisions.route(user, params.id, payload)).pipe(Effect.map(detail))
        ),
      retryAction: ({ params }) =>
        answerDecisions(
          Effect.flatMap(CurrentUser, (user) => decisions.retryAction(user, params.id, params.actionId)).pipe(
            Effect.map(detail)
          )
        )
    })
  })
)

export const WorkspaceRoleHandlers = HttpApiBuilder.group(DecisionsApi, "workspaceRoles", (handlers) =>
  Effect.gen(function* () {
    const decisions = yield* Decisions
    return handlers.handleAll({
      list: () => withUser((user) => Effect.map(decisions.listRoles(user), (roles) => ({ data: { roles } }))),
      create: ({ payload }) =>
        withUser((user) => Effect.map(decisions.createRole(user, payload), (role) => ({ data: { role } }))),
      update: ({ params, payload }) =>
        withUser((user) =>
          Effect.map(decisions.updateRole(user, params.slug, payload), (role) => ({ data: { role } }))
        ),
      archive: ({ params }) =>
        withUser((user) => Effect.map(decisions.archiveRole(user, params.slug), (role) => ({ data: { role } }))),
      assignments: ({ params }) =>
        withUser((user) =>
          Effect.map(decisions.listAssignments(user, params.slug), (assignments) => ({ data: { assignments } }))
        ),
      assign: ({ params, payload }) =>
        withUser((user) =>
          Effect.map(decisions.assign(user, params.slug, payload.memberEmail), (assignments) => ({
            data: { assignments }
          }))
        ),
      unassign: ({ params }) =>
        withUser((user) =>
          decisions.unassign(user, params.slug, params.email).pipe(
            Effect.andThen(decisions.listAssignments(user, params.slug)),
            Effect.map((assignments) => ({ data: { assignments } }))
          )
        )
    })
  })
)

export const WorkspaceKeyHandlers = HttpApiBuilder.group(DecisionsApi, "workspaceKeys", (handlers) =>
  Effect.gen(function* () {
    const decisions = yield* Decisions
    return handlers.handleAll({
      list: () => withUser((user) => Effect.map(decisions.listKeys(user), (keys) => ({ data: { keys } }))),
      create: ({ payload }) =>
        withUser((user) => Effect.map(decisions.createKey(user, payload.name), (created) => ({ data: created }))),
      rotate: ({ params }) =>
        withUser((user) => Effect.map(decisions.rotateKey(user, params.id), (rotated) => ({ data: rotated }))),
      revoke: ({ params }) =>
        withUser((user) => Effect.map(decisions.revokeKey(user, params.id), (key) => ({ data: { key } })))
    })
  })
)

export const WorkspaceTemplateHandlers = HttpApiBuilder.group(DecisionsApi, "workspaceTemplates", (handlers) =>
  Effect.gen(function* () {
    const templates = yield* Templates
    return handlers.handleAll({
      list: () => withUser((user) => Effect.map(templates.list(user), (all) => ({ data: { templates: all } }))),
      create: ({ payload }) =>
        withUser((user) => Effect.map(templates.create(user, payload), (template) => ({ data: { template } }))),
      get: ({ params }) =>
        withUser((user) => Effect.map(templates.get(user, params.slug), (template) => ({ data: { template } }))),
      update: ({ params, payload }) =>
        withUser((user) =>
          Effect.map(templates.update(user, params.slug, payload), (template) => ({ data: { template } }))
        ),
      archive: ({ params }) =>
        withUser((user) => Effect.map(templates.archive(user, params.slug), (template) => ({ data: { template } }))),
      raise: ({ params, payload }) =>
        withUser((user) => Effect.map(templates.raiseAsUser(user, params.slug, payload.params), (view) => one(view)))
    })
  })
)

export const CallerTemplateHandlers = HttpApiBuilder.group(DecisionsApi, "callerTemplates", (handlers) =>
  Effect.gen(function* () {
    const templates = yield* Templates
    const workspace = yield* WorkspaceAddress
    return handlers.handleAll({
      raise: ({ params, payload }) =>
        answerDecisions(
          Effect.flatMap(CurrentCaller, (caller) => templates.raise(caller, params.slug, payload.params)).pipe(
            Effect.map((view) => one(view, workspace))
          )
        )
    })
  })
)

export const CallerWebhookHandlers = HttpApiBuilder.group(DecisionsApi, "callerWebhooks", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* Webhooks
    return handlers.handleAll({
      register: ({ payload }) =>
        answerDecisions(
          Effect.flatMap(CurrentCaller, (caller) => webhooks.register(caller, payload.url)).pipe(
            Effect.map((registered) => ({ data: registered }))
          )
        )
    })
  })
)

export const WorkspaceWebhookHandlers = HttpApiBuilder.group(DecisionsApi, "workspaceWebhooks", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* Webhooks
    const deliveries = yield* WebhookDeliveries
    return handlers.handleAll({
      list: () =>
        answerDecisions(
          Effect.flatMap(CurrentUser, (user) => webhooks.list(user)).pipe(
            Effect.map((all) => ({ data: { webhooks: all } }))
          )
        ),
      disable: ({ params }) =>
        answerDecisions(
          Effect.flatMap(CurrentUser, (user) => webhooks.disable(user, params.id)).pipe(
            Effect.map((webhook) => ({ data: { webhook } }))
          )
        ),
      deliveries: ({ params, query }) =>
        answerDecisions(
          Effect.flatMap(CurrentUser, (user) => deliveries.list(user, params.id, query.limit ?? defaultPageLimit)).pipe(
            Effect.map((all) => ({ data: { deliveries: all } }))
          )
        )
    })
  })
)

export const WorkspaceIntegrationHandlers = HttpApiBuilder.group(DecisionsApi, "workspaceIntegrations", (handlers) =>
  Effect.gen(function* () {
    const actions = yield* RecordActions
    return handlers.handleAll({
      recordStore: () =>
        answerDecisions(
          Effect.flatMap(CurrentUser, (user) => actions.credentialsStatus(user)).pipe(
            Effect.map((recordStore) => ({ data: { recordStore } }))
          )
        ),
      setRecordStore: ({ payload }) =>
        answerDecisions(
          Effect.flatMap(CurrentUser, (user) => actions.setCredentials(user, payload.token)).pipe(
            Effect.map((recordStore) => ({ data: { recordStore } }))
          )
        )
    })
  })
)

/** Every group of the decisions API but the uniform one (which takes the manifest). */
export const DecisionsHandlers = Layer.mergeAll(
  CallerHandlers,
  WorkspaceDecisionHandlers,
  WorkspaceRoleHandlers,
  WorkspaceKeyHandlers,
  WorkspaceTemplateHandlers,
  CallerTemplateHandlers,
  CallerWebhookHandlers,
  WorkspaceWebhookHandlers,
  WorkspaceIntegrationHandlers,
  WorkspaceFlowHandlers,
  PagesHandlers
)
