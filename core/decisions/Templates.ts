import { Clock, Context, Effect, Layer, Result, Schema } from "effect"
import { NotFound, ValidationError, type Forbidden, type PayloadTooLarge } from "../kernel/Errors.ts"
import { bodyIssue, detailsOf } from "../kernel/FieldIssue.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import { Decisions as L } from "../kernel/Limits.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { Urgency } from "./Decision.ts"
import { QuorumCreate } from "./Quorum.ts"
import { Decisions, requireAdmin, type CallerIdentity, type DecisionView, type WorkspaceUser } from "./Decisions.ts"
import { UnknownRole, UnknownTemplate } from "./Errors.ts"
import { defaultLadderProblem } from "./EscalationLadder.ts"
import { Escalation } from "./EscalationSchema.ts"
import { RoleStore } from "./RoleStore.ts"
import { raise, TemplateOptionCreate, type Template, type TemplateCreate, type TemplateParams } from "./Template.ts"
import { TemplateStore } from "./TemplateStore.ts"

/** At least one property; `slug` never changes; `options` replaces the list. */
export const TemplateUpdate = Schema.Struct({
  slug: Schema.optionalKey(Schema.String),
  name: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(L.templateNameMax))),
  roleSlug: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(L.roleSlugMax))),
  titleTemplate: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(L.titleTemplateMax))),
  bodyTemplate: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(L.bodyTemplateMax)))),
  urgency: Schema.optionalKey(Urgency),
  options: Schema.optionalKey(
    Schema.Array(TemplateOptionCreate).check(Schema.isMinLength(L.optionsMin), Schema.isMaxLength(L.optionsMax))
  ),
  /** `null` clears it. */
  quorum: Schema.optionalKey(Schema.NullOr(QuorumCreate)),
  /** Replaces the ladder of the decisions it raises; null removes it. */
  escalation: Schema.optionalKey(Schema.NullOr(Escalation))
}).annotate({ identifier: "TemplateUpdate" })
export type TemplateUpdate = typeof TemplateUpdate.Type

const invalid = (field: string, message: string) =>
  new ValidationError({ message: `Invalid ${field}.`, details: [bodyIssue(field, message)] })

/** Templates: admins keep them; callers and workspace users raise them into decisions. */
export class Templates extends Context.Service<
  Templates,
  {
    /** The organization's templates, archived ones too. */
    readonly list: (user: WorkspaceUser) => Effect.Effect<ReadonlyArray<Template>>
    readonly get: (user: WorkspaceUser, slug: string) => Effect.Effect<Template, NotFound>
    /** Admins only; the role must exist and be live, the slug unused. */
    readonly create: (
      user: WorkspaceUser,
      input: TemplateCreate
    ) => Effect.Effect<Template, Forbidden | UnknownRole | ValidationError>
    /** Admins only; `slug` never changes, `options` replaces the list. */
    readonly update: (
      user: WorkspaceUser,
      slug: string,
      patch: TemplateUpdate
    ) => Effect.Effect<Template, Forbidden | NotFound | UnknownRole | ValidationError>
    /** Admins only; archiving an archived template answers it unchanged. */
    readonly archive: (user: WorkspaceUser, slug: string) => Effect.Effect<Template, Forbidden | NotFound>
    /** Raising creates a decision: an unknown or archived template is `unknown_template`. */
    readonly raise: (
      caller: CallerIdentity,
      slug: string,
      params: TemplateParams
    ) => Effect.Effect<DecisionView, RaiseError>
    /** A workspace user raises as themselves: the decision's caller is their email. */
    readonly raiseAsUser: (
      user: WorkspaceUser,
      slug: string,
      params: TemplateParams
    ) => Effect.Effect<DecisionView, RaiseError>
  }
>()("core/decisions/Templates") {
  static readonly layer: Layer.Layer<Templates, never, TemplateStore | RoleStore | Decisions | IdGenerator> =
    Layer.effect(
      Templates,
      Effect.suspend(() => make)
    )
}

/** Why raising a template is refused: the template, its params, or the decision it makes. */
export type RaiseError = UnknownTemplate | UnknownRole | ValidationError | PayloadTooLarge

const make = Effect.gen(function* () {
  const templates = yield* TemplateStore
  const roles = yield* RoleStore
  const decisions = yield* Decisions
  const ids = yield* IdGenerator

  const requireRole = Effect.fnUntraced(function* (organizationId: string, slug: string) {
    const role = yield* roles.get(organizationId, slug)
    if (role === undefined || role.archivedAt !== undefined) {
      const all = yield* roles.list(organizationId)
      return yield* new UnknownRole({ validRoles: all.filter((r) => r.archivedAt === undefined).map((r) => r.slug) })
    }
  })

  const withOptionIds = (options: TemplateCreate["options"]) =>
    Effect.forEach(options, (option, position) =>
      Effect.map(ids.next, (id) => ({ ...option, id: `opt_${id.toLowerCase()}`, position }))
    )

  const existing = Effect.fnUntraced(function* (organizationId: string, slug: string) {
    const template = yield* templates.get(organizationId, slug)
    if (template === undefined) return yield* new NotFound({ message: "No such template." })
    return template
  })

  const list = Effect.fn("Templates.list")(function* (user: WorkspaceUser) {
    return yield* templates.list(user.organizationId)
  })

  const get = Effect.fn("Templates.get")(function* (user: WorkspaceUser, slug: string) {
    return yield* existing(user.organizationId, slug)
  })

  const create = Effect.fn("Templates.create")(function* (user: WorkspaceUser, input: TemplateCreate) {
    yield* requireAdmin(user)
    yield* requireRole(user.organizationId, input.roleSlug)
    yield* defaultLadderProblem(input.escalation)
    const at = isoAt(yield* Clock.currentTimeMillis)
    const template: Template = {
      id: yield* ids.next,
      slug: input.slug,
      name: input.name,
      roleSlug: input.roleSlug,
      titleTemplate: input.titleTemplate,
      ...(input.bodyTemplate === undefined ? {} : { bodyTemplate: input.bodyTemplate }),
      urgency: input.urgency ?? "normal",
      options: yield* withOptionIds(input.options),
      ...(input.quorum === undefined ? {} : { quorum: input.quorum }),
      ...(input.escalation === undefined ? {} : { escalation: input.escalation }),
      createdAt: at,
      updatedAt: at
    }
    if (!(yield* templates.create(user.organizationId, template))) {
      return yield* invalid("slug", "a template with this slug already exists")
    }
    return template
  })

  const update = Effect.fn("Templates.update")(function* (user: WorkspaceUser, slug: string, patch: TemplateUpdate) {
    yield* requireAdmin(user)
    const current = yield* existing(user.organizationId, slug)
    if (patch.slug !== undefined && patch.slug !== slug) return yield* invalid("slug", "cannot be changed")
    const { slug: _slug, ...changes } = patch
    if (Object.values(changes).every((v) => v === undefined)) {
      return yield* new ValidationError({
        message: "Name at least one property to change.",
        details: [bodyIssue("", "names no property to change")]
      })
    }
    if (changes.roleSlug !== undefined) yield* requireRole(user.organizationId, changes.roleSlug)
    yield* defaultLadderProblem(changes.escalation ?? undefined)
    const { bodyTemplate: _body, quorum: _quorum, escalation: _ladder, ...rest } = current
    const bodyTemplate = changes.bodyTemplate === undefined ? current.bodyTemplate : (changes.bodyTemplate ?? undefined)
    const quorum = changes.quorum === undefined ? current.quorum : (changes.quorum ?? undefined)
    const escalation = changes.escalation === undefined ? current.escalation : (changes.escalation ?? undefined)
    const next: Template = {
      ...rest,
      ...(changes.name === undefined ? {} : { name: changes.name }),
      ...(changes.roleSlug === undefined ? {} : { roleSlug: changes.roleSlug }),
      ...(changes.titleTemplate === undefined ? {} : { titleTemplate: changes.titleTemplate }),
      ...(bodyTemplate === undefined ? {} : { bodyTemplate }),
      ...(changes.urgency === undefined ? {} : { urgency: changes.urgency }),
      ...(changes.options === undefined ? {} : { options: yield* withOptionIds(changes.options) }),
      ...(quorum === undefined ? {} : { quorum }),
      ...(escalation === undefined ? {} : { escalation }),
      updatedAt: isoAt(yield* Clock.currentTimeMillis)
    }
    yield* templates.replace(user.organizationId, next)
    return next
  })

  const archive = Effect.fn("Templates.archive")(function* (user: WorkspaceUser, slug: string) {
    yield* requireAdmin(user)
    const current = yield* existing(user.organizationId, slug)
    if (current.archivedAt !== undefined) return current
    const at = isoAt(yield* Clock.currentTimeMillis)
    const next: Template = { ...current, archivedAt: at, updatedAt: at }
    yield* templates.replace(user.organizationId, next)
    return next
  })

  /** Raising creates a decision: an unknown or archived template is `unknown_template`. */
  const raiseTemplate = Effect.fn("Templates.raise")(function* (
    caller: CallerIdentity,
    slug: string,
    params: TemplateParams
  ) {
    const template = yield* templates.get(caller.organizationId, slug)
    if (template === undefined || template.archivedAt !== undefined) {
      const all = yield* templates.list(caller.organizationId)
      return yield* new UnknownTemplate({
        validTemplates: all.filter((t) => t.archivedAt === undefined).map((t) => t.slug)
      })
    }
    const input = raise(template, params)
    if (Result.isFailure(input)) {
      return yield* new ValidationError({
        message:
          input.failure.missing.length > 0
            ? "The template needs params it was not given."
            : "A param of the template is not what its use needs.",
        ...detailsOf([
          ...input.failure.missing.map(({ field, param }) =>
            bodyIssue(`params.${param}`, `is used by ${field} but was not given`)
          ),
          ...input.failure.invalid.map(({ param, message }) => bodyIssue(`params.${param}`, message))
        ])
      })
    }
    return yield* decisions.create(caller, input.success.decision, input.success.actions, template.slug)
  })

  /** A workspace user raises as themselves: the decision's caller is their email. */
  const raiseAsUser = (user: WorkspaceUser, slug: string, params: TemplateParams) =>
    raiseTemplate(
      { organizationId: user.organizationId, callerName: user.email, keyId: `user:${user.email}` },
      slug,
      params
    )

  return Templates.of({ list, get, create, update, archive, raise: raiseTemplate, raiseAsUser })
})
