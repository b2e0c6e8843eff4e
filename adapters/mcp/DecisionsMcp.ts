import { Context, Effect, Layer, Schema } from "effect"
import { McpProtocol, McpServer, Tool, Toolkit } from "effect/ai"
import { DecisionCreate, openStatuses } from "../../core/decisions/Decision.ts"
import { Decisions, type DecisionView } from "../../core/decisions/Decisions.ts"
import { publicDecision } from "../../core/decisions/DecisionView.ts"
import { IdempotencyStore } from "../../core/idempotency/IdempotencyStore.ts"
import { Transactions } from "../../core/kernel/Transactions.ts"
import { ServerDraining } from "../http/ServiceHttp.ts"
import { Decisions as L } from "../../core/kernel/Limits.ts"
import { defaultPageLimit, PageLimit } from "../../core/kernel/Paging.ts"
import { CurrentCaller } from "../http/decisions/Auth.ts"
import { DecisionId, DecisionResponse, InfoResponseBody } from "../http/decisions/Schemas.ts"
import { McpCallerAuth } from "./McpCallerAuth.ts"
import { defaultMcpSessionLimits, mcpSharedSessionRoutes, type McpSessionLimits } from "./McpSharedSessions.ts"
import { decodeArguments, toToolFailure, ToolFailure } from "./ToolFailure.ts"
import { runIdempotentTool } from "./ToolIdempotency.ts"

// ---- arguments ----

const IdempotencyKey = Schema.String.check(
  Schema.isMinLength(1),
  Schema.isMaxLength(L.idempotencyKeyMax),
  Schema.isPattern(/^[\x21-\x7e]+$/, { description: "visible ASCII characters" })
).annotate({
  description:
    "1 to 255 visible ASCII characters, unique per decision you mean to create. Retrying with the same key " +
    "and arguments returns the first answer instead of creating a second decision."
})

export const RequestDecisionArguments = Schema.Struct({ ...DecisionCreate.fields, idempotencyKey: IdempotencyKey })

export const GetDecisionArguments = Schema.Struct({
  id: DecisionId.annotate({ description: "The decision id returned by request_decision" }),
  wait: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: L.waitMaxSeconds })).annotate({
      description:
        "Seconds (0 to 60) to wait for the status to change before answering; the current state is answered " +
        "when the wait runs out. Set your client's request timeout above this."
    })
  )
})

export const ListPendingArguments = Schema.Struct({
  cursor: Schema.optionalKey(
    Schema.String.check(Schema.isMaxLength(64)).annotate({ description: "nextCursor of the previous page" })
  ),
  limit: Schema.optionalKey(PageLimit.annotate({ description: "Page size, 1 to 100 (default 25)" }))
})

export const RespondToInfoRequestArguments = Schema.Struct({
  decisionId: DecisionId,
  ...InfoResponseBody.fields
})

// ---- answers: the decision exactly as the HTTP caller plane shows it ----

const DecisionAnswer = Schema.Struct({ decision: DecisionResponse })
const DecisionPageAnswer = Schema.Struct({
  decisions: Schema.Array(DecisionResponse),
  nextCursor: Schema.optionalKey(Schema.String)
})

// Parameters are published as JSON Schema and decoded by the handlers (see decodeArguments).
const tool = <const Name extends string, S extends Schema.Top>(
  name: Name,
  options: { readonly description: string; readonly arguments: Schema.Top; readonly success: S }
) =>
  Tool.dynamic(name, {
    description: options.description,
    parameters: Tool.getJsonSchemaFromSchema(options.arguments),
    success: options.success,
    failure: ToolFailure
  }).addDependency(CurrentCaller)

export const RequestDecision = tool("request_decision", {
  description:
    "Ask people in your organization to decide: a title, a decision role (roleSlug) whose holders decide, " +
    "2 to 5 options, and optional body (markdown), facts, links, urgency, expiry, quorum ({count: M}: the " +
    "decision resolves only when M different people give the same answer) and escalation (steps that " +
    "remind the deciders, route to another role or person, or tell the admins, seconds after creation, while " +
    "nobody has answered). Answers the created " +
    "decision (status pending) with its routing and `url`, the address of its page in the workspace to hand " +
    "a person. Learn the outcome with get_decision.",
  arguments: RequestDecisionArguments,
  success: DecisionAnswer
})
  .annotate(Tool.Title, "Request a decision")
  .annotate(Tool.Idempotent, true)

export const GetDecision = tool("get_decision", {
  description:
    "Read one of your organization's decisions. With wait (seconds, at most 60) the call blocks until the " +
    "status changes or the wait ends, then answers the decision as it is. A decision with a quorum shows its " +
    "votes and tally (quorum.tally) while open; a vote does not end a wait, only the resolution does.",
  arguments: GetDecisionArguments,
  success: DecisionAnswer
})
  .annotate(Tool.Title, "Get a decision")
  .annotate(Tool.Readonly, true)

export const ListPending = tool("list_pending", {
  description:
    "List your organization's open decisions (status pending or needs_info), newest first. Pass nextCursor " +
    "back as cursor for the next page.",
  arguments: ListPendingArguments,
  success: DecisionPageAnswer
})
  .annotate(Tool.Title, "List open decisions")
  .annotate(Tool.Readonly, true)

export const RespondToInfoRequest = tool("respond_to_info_request", {
  description:
    "Answer a decider's question on a decision in status needs_info (infoRequestId is the id of its latest " +
    "unanswered entry in infoRequests). The decision returns to pending.",
  arguments: RespondToInfoRequestArguments,
  success: DecisionAnswer
}).annotate(Tool.Title, "Answer a decider's question")

export const DecisionsTools = Toolkit.make(RequestDecision, GetDecision, ListPending, RespondToInfoRequest)

/** As the HTTP caller plane: `url` (the page's address in the workspace) on request_decision and get_decision. */
const one = (view: DecisionView, workspace?: string) => ({
  decision: publicDecision(view.decision, { routing: view.routing, workspace })
})

/** The detail read also carries `actions`, as the HTTP caller plane's GET does. */
const detail = (view: DecisionView, workspace?: string) => ({
  decision: publicDecision(view.decision, { routing: view.routing, actions: true, workspace })
})

/** The tools over the decisions use cases; each reads the caller the `/mcp` auth middleware resolved. */
export const DecisionsToolHandlers = (config: {
  readonly secretsKey: string | undefined
  readonly workspaceUrl?: string | undefined
}) =>
  DecisionsTools.toLayer(
    Effect.gen(function* () {
      const workspace = config.workspaceUrl
      const decisions = yield* Decisions
      const store = yield* IdempotencyStore
      const transactions = yield* Transactions
      return DecisionsTools.of({
        request_decision: (params) =>
          toToolFailure(
            Effect.gen(function* () {
              const caller = yield* CurrentCaller
              const { idempotencyKey, ...input } = yield* decodeArguments(RequestDecisionArguments)(params)
              return yield* runIdempotentTool({
                store,
                transactions,
                runOptions: { secretsKey: config.secretsKey },
                caller,
                tool: "request_decision",
                key: idempotencyKey,
                arguments: input,
                run: Effect.map(decisions.create(caller, input), (view) => one(view, workspace))
              })
            })
          ),
        get_decision: (params) =>
          toToolFailure(
            Effect.gen(function* () {
              const caller = yield* CurrentCaller
              const { id, wait } = yield* decodeArguments(GetDecisionArguments)(params)
              const view =
                wait === undefined || wait === 0
                  ? yield* decisions.get(caller.organizationId, id)
                  : yield* decisions.waitForChange(caller.organizationId, id, wait, yield* ServerDraining)
              return detail(view, workspace)
            })
          ),
        list_pending: (params) =>
          toToolFailure(
            Effect.gen(function* () {
              const caller = yield* CurrentCaller
              const { cursor, limit } = yield* decodeArguments(ListPendingArguments)(params)
              const page = yield* decisions.listForCaller(caller, {
                statuses: openStatuses,
                cursor,
                limit: limit ?? defaultPageLimit
              })
              return {
                decisions: page.items.map((item) => publicDecision(item.decision, { routing: item.routing })),
                ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor })
              }
            })
          ),
        respond_to_info_request: (params) =>
          toToolFailure(
            Effect.gen(function* () {
              const caller = yield* CurrentCaller
              const { decisionId, ...answer } = yield* decodeArguments(RespondToInfoRequestArguments)(params)
              return one(yield* transactions.atomically(decisions.answerInfo(caller, decisionId, answer)))
            })
          )
      })
    })
  )

export interface DecisionsMcpConfig {
  /** The build the server reports to clients as its version. */
  readonly build: string
  /** Seals the kept answers of `request_decision` (see core/idempotency). */
  readonly secretsKey: string | undefined
  /** Where people open the workspace: request_decision and get_decision answer the page's `url` there. */
  readonly workspaceUrl?: string | undefined
  /** Idle expiry, cap per key and `initialize` size of sessions; the defaults unless given. */
  readonly sessionLimits?: McpSessionLimits | undefined
}

/**
 * An MCP server (Streamable HTTP) at `/mcp` on the decisions listener, behind
 * the caller plane's key, with sessions any instance can serve (see McpSharedSessions). A route layer like
 * the HTTP contract's: requires `Decisions`, `CallerAuthentication`, the `IdempotencyStore` and `Transactions` of the decisions
 * service, its `McpSessionStore`, the caller plane's `CallerBudget` and `RateLimits`, and is merged into its router.
 */
export const decisionsMcpRoutes = (config: DecisionsMcpConfig) =>
  mcpSharedSessionRoutes({
    path: "/mcp",
    limits: config.sessionLimits ?? defaultMcpSessionLimits,
    server: Effect.gen(function* () {
      const services = Context.make(Decisions, yield* Decisions).pipe(
        Context.add(IdempotencyStore, yield* IdempotencyStore),
        Context.add(Transactions, yield* Transactions)
      )
      return Layer.flatMap(
        McpServer.layerHttp({
          name: "decisions",
          version: config.build,
          path: "/mcp",
          protocols: [McpProtocol.v2025_11_25, McpProtocol.v2025_06_18, McpProtocol.v2025_03_26],
          allowSessionTermination: true,
          registrations: McpServer.toolkit(DecisionsTools).pipe(Layer.provide(DecisionsToolHandlers(config)))
        }).pipe(
          // The only construction failure is an unsupported protocol list: a programming error, not a runtime one.
          Layer.orDie
        ),
        () => Layer.empty
      ).pipe(Layer.provide(Layer.succeedContext(services)))
    })
  }).pipe(Layer.provide(McpCallerAuth.layer))
