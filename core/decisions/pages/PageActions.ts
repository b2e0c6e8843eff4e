import { Effect, Result } from "effect"
import { NotFound, ValidationError } from "../../kernel/Errors.ts"
import { bodyIssue } from "../../kernel/FieldIssue.ts"
import type { ActionResult } from "../../kernel/PageDocument.ts"
import { RoleCreate } from "../Role.ts"
import { TemplateParams } from "../Template.ts"
import type { DecisionsService, WorkspaceUser } from "../Decisions.ts"
import type { RecordActions } from "../RecordActions.ts"
import type { Templates } from "../Templates.ts"
import type { Webhooks } from "../Webhooks.ts"
import { decisionHref, parseActionId } from "./Addresses.ts"
import {
  AskValues,
  AssignValues,
  ChooseValues,
  DeclineValues,
  KeyValues,
  RecordStoreValues,
  RouteValues,
  decodeValues,
  type ActionValues
} from "./ActionValues.ts"

/** The use cases an action runs: the same ones the API's routes run, so the same rules hold. */
export interface ActionServices {
  readonly decisions: DecisionsService
  readonly templates: Templates["Service"]
  readonly webhooks: Webhooks["Service"]
  readonly recordActions: RecordActions["Service"]
}

const done: ActionResult = { result: "ok", refresh: true }

const issued = (plaintext: string): ActionResult => ({
  result: "ok",
  refresh: true,
  message: "Copy the key now: it is shown only this once.",
  secret: plaintext
})

const values = <A>(decoded: Result.Result<A, ValidationError>): Effect.Effect<A, ValidationError> =>
  Result.isSuccess(decoded) ? Effect.succeed(decoded.success) : Effect.fail(decoded.failure)

const noSuchAction = () => new NotFound({ message: "No such action." })

/**
 * Runs the action a page offered, as the person: the action id names the use case and its target, the
 * form values are its input. Whatever the use case refuses (not allowed, not found, invalid transition)
 * is refused here alike; the caller runs this inside the request's unit of work.
 */
export const runAction = (services: ActionServices, user: WorkspaceUser, id: string, input: ActionValues) =>
  Effect.gen(function* () {
    const { decisions, templates, webhooks, recordActions } = services
    const action = parseActionId(id)
    if (action === undefined) return yield* noSuchAction()
    switch (action._tag) {
      case "Choose": {
        const given = yield* values(decodeValues(ChooseValues, input))
        const optionId = action.optionId ?? given.optionId
        if (optionId === undefined) {
          return yield* new ValidationError({
            message: "Choose an option.",
            details: [bodyIssue("optionId", "is required")]
          })
        }
        yield* decisions.choose(user, action.decisionId, { optionId, rationale: given.rationale })
        return done
      }
      case "Decline": {
        const given = yield* values(decodeValues(DeclineValues, input))
        yield* decisions.decline(user, action.decisionId, given)
        return done
      }
      case "Ask": {
        const given = yield* values(decodeValues(AskValues, input))
        yield* decisions.askInfo(user, action.decisionId, given.question)
        return done
      }
      case "Route": {
        const given = yield* values(decodeValues(RouteValues, input))
        yield* decisions.route(user, action.decisionId, given)
        return done
      }
      case "RetryAction":
        yield* decisions.retryAction(user, action.decisionId, action.actionId)
        return done
      case "CreateRole":
        yield* decisions.createRole(user, yield* values(decodeValues(RoleCreate, input)))
        return done
      case "ArchiveRole":
        yield* decisions.archiveRole(user, action.slug)
        return done
      case "Assign": {
        const given = yield* values(decodeValues(AssignValues, input))
        yield* decisions.assign(user, action.slug, given.memberEmail)
        return done
      }
      case "Unassign":
        yield* decisions.unassign(user, action.slug, action.email)
        return done
      case "CreateKey": {
        const given = yield* values(decodeValues(KeyValues, input))
        return issued((yield* decisions.createKey(user, given.name)).plaintext)
      }
      case "RotateKey":
        return issued((yield* decisions.rotateKey(user, action.keyId)).plaintext)
      case "RevokeKey":
        yield* decisions.revokeKey(user, action.keyId)
        return done
      case "RaiseTemplate": {
        const params = yield* values(decodeValues(TemplateParams, input))
        const raised = yield* templates.raiseAsUser(user, action.slug, params)
        return {
          result: "ok",
          refresh: false,
          redirect: decisionHref(raised.decision.id),
          message: "Decision raised."
        } satisfies ActionResult
      }
      case "ArchiveTemplate":
        yield* templates.archive(user, action.slug)
        return done
      case "DisableWebhook":
        yield* webhooks.disable(user, action.webhookId)
        return done
      case "SetRecordStore": {
        const given = yield* values(decodeValues(RecordStoreValues, input))
        yield* recordActions.setCredentials(user, given.token)
        return done
      }
      case "UnsetRecordStore":
        yield* recordActions.clearCredentials(user)
        return done
    }
  })
