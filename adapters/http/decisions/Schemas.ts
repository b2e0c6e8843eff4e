import { flow, Schema, SchemaGetter, Struct } from "effect"
import type { DecisionStatus as Status } from "../../../core/decisions/Decision.ts"
import { ApiKey } from "../../../core/decisions/CallerKeyStore.ts"
import { Decision, DecisionStatus, Slug } from "../../../core/decisions/Decision.ts"
import { DecisionActionView } from "../../../core/decisions/DecisionAction.ts"
import { QuorumView } from "../../../core/decisions/Quorum.ts"
import { Assignment, Role } from "../../../core/decisions/Role.ts"
import { Template } from "../../../core/decisions/Template.ts"
import { WebhookEndpoint } from "../../../core/decisions/WebhookStore.ts"
import { Email } from "../../../core/kernel/Email.ts"
import { Decisions as L } from "../../../core/kernel/Limits.ts"

export const RoutingSchema = Schema.Struct({
  assigneeCount: Schema.Int,
  unrouted: Schema.Boolean,
  reason: Schema.optionalKey(Schema.Literals(["no_members", "role_archived", "role_missing"]))
}).annotate({ identifier: "DecisionRouting" })

/**
 * The stored decision without its internal version, plus routing, its record actions as DecisionActionViews
 * (names, never values) on detail, choose, decline, route and retry, and its page's `url` on create and get.
 */
export const DecisionResponse = Decision.mapFields(
  flow(
    Struct.omit(["version", "actions"]),
    Struct.assign({
      routing: Schema.optionalKey(RoutingSchema),
      actions: Schema.optionalKey(Schema.Array(DecisionActionView)),
      quorum: Schema.optionalKey(QuorumView),
      url: Schema.optionalKey(Schema.String).annotate({
        description:
          "The absolute address of the decision's page in the workspace, to hand a person; on the answers of " +
          "create, raise and get (the caller's and the workspace's)"
      })
    })
  )
).annotate({ identifier: "Decision" })

export const DecisionEnvelope = Schema.Struct({ data: Schema.Struct({ decision: DecisionResponse }) }).annotate({
  identifier: "DecisionEnvelope"
})

export const DecisionListEnvelope = Schema.Struct({
  data: Schema.Struct({ decisions: Schema.Array(DecisionResponse), nextCursor: Schema.optionalKey(Schema.String) })
}).annotate({ identifier: "DecisionListEnvelope" })

/** `status=pending,needs_info`: one status or several, comma-separated. */
export const StatusFilter = Schema.String.pipe(
  Schema.decodeTo(Schema.Array(DecisionStatus), {
    // The parts are validated by the target schema, which names any unknown status.
    decode: SchemaGetter.transform((s: string) => s.split(",").map((part) => part.trim()) as Array<Status>),
    encode: SchemaGetter.transform((statuses: ReadonlyArray<string>) => statuses.join(","))
  })
)

const IntFromString = (min: number, max: number) =>
  Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: min, maximum: max }))

export const ListQuery = {
  status: Schema.optionalKey(StatusFilter),
  // A cursor is the id of the last decision of the page before: anything else is refused, not read as a list's end.
  cursor: Schema.optionalKey(
    Schema.String.check(
      Schema.isPattern(/^[0-9A-HJKMNP-TV-Z]{26}$/, { description: "the nextCursor of a previous page" })
    )
  ),
  limit: Schema.optionalKey(IntFromString(L.pageSizeMin, L.pageSizeMax))
}

export const WaitQuery = { wait: Schema.optionalKey(IntFromString(0, L.waitMaxSeconds)) }

export const DecisionId = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(64))

export const InfoResponseBody = Schema.Struct({
  infoRequestId: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(64)),
  answer: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(L.infoAnswerMax))
}).annotate({ identifier: "InfoResponse" })

export const ChooseBody = Schema.Struct({
  optionId: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(64)),
  rationale: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(L.rationaleMax)))
}).annotate({ identifier: "Choose" })

export const DeclineBody = Schema.Struct({
  rationale: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(L.rationaleMax)))
}).annotate({ identifier: "Decline" })

export const InfoRequestBody = Schema.Struct({
  question: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(L.infoQuestionMax))
}).annotate({ identifier: "InfoRequestCreate" })

export const RouteBody = Schema.Struct({
  toRole: Schema.optionalKey(Slug),
  toEmail: Schema.optionalKey(Email),
  note: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(L.assignmentNoteMax)))
}).annotate({ identifier: "Route" })

export const WorkspaceScope = Schema.Literals(["inbox", "all", "unrouted"])

export const RoleEnvelope = Schema.Struct({ data: Schema.Struct({ role: Role }) }).annotate({
  identifier: "RoleEnvelope"
})
export const RoleListEnvelope = Schema.Struct({ data: Schema.Struct({ roles: Schema.Array(Role) }) }).annotate({
  identifier: "RoleListEnvelope"
})
export const AssignmentListEnvelope = Schema.Struct({
  data: Schema.Struct({ assignments: Schema.Array(Assignment) })
}).annotate({ identifier: "AssignmentListEnvelope" })

export const KeyCreate = Schema.Struct({
  name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(80))
}).annotate({ identifier: "KeyCreate" })
export const KeyEnvelope = Schema.Struct({ data: Schema.Struct({ key: ApiKey }) }).annotate({
  identifier: "KeyEnvelope"
})
export const KeyListEnvelope = Schema.Struct({ data: Schema.Struct({ keys: Schema.Array(ApiKey) }) }).annotate({
  identifier: "KeyListEnvelope"
})
export const KeyCreatedEnvelope = Schema.Struct({
  data: Schema.Struct({ key: ApiKey, plaintext: Schema.String })
}).annotate({ identifier: "KeyCreatedEnvelope" })

export const TemplateEnvelope = Schema.Struct({ data: Schema.Struct({ template: Template }) }).annotate({
  identifier: "TemplateEnvelope"
})
export const TemplateListEnvelope = Schema.Struct({
  data: Schema.Struct({ templates: Schema.Array(Template) })
}).annotate({ identifier: "TemplateListEnvelope" })

export const WebhookCreate = Schema.Struct({
  url: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(2048))
}).annotate({ identifier: "WebhookCreate" })
export const WebhookCreatedEnvelope = Schema.Struct({
  data: Schema.Struct({ webhook: WebhookEndpoint, secret: Schema.String })
}).annotate({ identifier: "WebhookCreatedEnvelope" })
export const WebhookEnvelope = Schema.Struct({ data: Schema.Struct({ webhook: WebhookEndpoint }) }).annotate({
  identifier: "WebhookEnvelope"
})
export const WebhookListEnvelope = Schema.Struct({
  data: Schema.Struct({ webhooks: Schema.Array(WebhookEndpoint) })
}).annotate({ identifier: "WebhookListEnvelope" })

export const RecordStoreCredentialsBody = Schema.Struct({
  token: Schema.String.check(
    Schema.isMinLength(1),
    Schema.isMaxLength(512),
    Schema.isPattern(/^\S+$/, { description: "a token without spaces" })
  )
}).annotate({ identifier: "RecordStoreCredentials" })

export const RecordStoreStatusEnvelope = Schema.Struct({
  data: Schema.Struct({
    recordStore: Schema.Struct({
      configured: Schema.Boolean,
      updatedAt: Schema.optionalKey(Schema.String),
      updatedBy: Schema.optionalKey(Schema.String)
    })
  })
}).annotate({ identifier: "RecordStoreStatusEnvelope" })

export const WebhookDeliveryView = Schema.Struct({
  id: Schema.String,
  webhookId: Schema.String,
  decisionId: Schema.String,
  eventType: Schema.String,
  status: Schema.Literals(["pending", "delivered", "failed", "skipped"]),
  attempts: Schema.Int,
  nextAttemptAt: Schema.String,
  createdAt: Schema.String,
  lastError: Schema.optionalKey(Schema.String),
  lastStatusCode: Schema.optionalKey(Schema.Int),
  completedAt: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "WebhookDelivery" })

export const WebhookDeliveryListEnvelope = Schema.Struct({
  data: Schema.Struct({ deliveries: Schema.Array(WebhookDeliveryView) })
}).annotate({ identifier: "WebhookDeliveryListEnvelope" })
