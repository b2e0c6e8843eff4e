import { Result, Schema } from "effect"
import { Decisions as L } from "../kernel/Limits.ts"
import { isRecordId, type RecordTarget } from "./DecisionAction.ts"
import { Slug, Urgency, type DecisionCreate, type Fact } from "./Decision.ts"
import { QuorumCreate } from "./Quorum.ts"
import { Escalation } from "./EscalationSchema.ts"

/** */
const ParamKey = Schema.String.check(
  Schema.isMaxLength(L.templateParamKeyMax),
  Schema.isPattern(/^[a-zA-Z][a-zA-Z0-9-]*$/, { description: "a letter, then letters, digits or -" })
)

export const TemplateParams = Schema.Record(
  ParamKey,
  Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(L.templateParamValueMax))
).check(Schema.isMaxProperties(L.templateParamsMax))
export type TemplateParams = typeof TemplateParams.Type

export const TemplateRaise = Schema.Struct({ params: TemplateParams }).annotate({ identifier: "TemplateRaise" })

export const TemplateActionConfig = Schema.Struct({
  type: Schema.Literal("record_update"),
  baseId: Schema.String.check(Schema.isPattern(/^app[a-zA-Z0-9]{14}$/)),
  tableId: Schema.String.check(Schema.isPattern(/^tbl[a-zA-Z0-9]{14}$/)),
  recordIdParam: Schema.optionalKey(ParamKey),
  fields: Schema.Record(
    Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255)),
    Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(L.actionFieldValueMax))
  ).check(Schema.isMinProperties(L.actionFieldsMin), Schema.isMaxProperties(L.actionFieldsMax))
}).annotate({ identifier: "TemplateActionConfig" })
export type TemplateActionConfig = typeof TemplateActionConfig.Type

export const TemplateOptionCreate = Schema.Struct({
  label: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(L.optionLabelMax)),
  description: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(L.optionDescriptionMax))),
  consequence: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(L.optionConsequenceMax))),
  action: Schema.optionalKey(TemplateActionConfig)
}).annotate({ identifier: "TemplateOptionCreate" })

export const TemplateOption = Schema.Struct({
  id: Schema.String,
  position: Schema.Int,
  label: Schema.String,
  description: Schema.optionalKey(Schema.String),
  consequence: Schema.optionalKey(Schema.String),
  action: Schema.optionalKey(TemplateActionConfig)
}).annotate({ identifier: "TemplateOption" })
export type TemplateOption = typeof TemplateOption.Type

const TemplateOptions = Schema.Array(TemplateOptionCreate).check(
  Schema.isMinLength(L.optionsMin),
  Schema.isMaxLength(L.optionsMax)
)

export const TemplateCreate = Schema.Struct({
  slug: Slug,
  name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(L.templateNameMax)),
  roleSlug: Slug,
  titleTemplate: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(L.titleTemplateMax)),
  bodyTemplate: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(L.bodyTemplateMax))),
  urgency: Schema.optionalKey(Urgency),
  options: TemplateOptions,
  /** The quorum of the decisions it raises (checked against the role's holders when one is raised). */
  quorum: Schema.optionalKey(QuorumCreate),
  /** The escalation ladder of the decisions it raises. */
  escalation: Schema.optionalKey(Escalation)
}).annotate({ identifier: "TemplateCreate" })
export type TemplateCreate = typeof TemplateCreate.Type

export const Template = Schema.Struct({
  id: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  roleSlug: Schema.String,
  titleTemplate: Schema.String,
  bodyTemplate: Schema.optionalKey(Schema.String),
  urgency: Urgency,
  options: Schema.Array(TemplateOption),
  quorum: Schema.optionalKey(QuorumCreate),
  escalation: Schema.optionalKey(Escalation),
  createdAt: Schema.String,
  updatedAt: Schema.String,
  archivedAt: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "Template" })
export type Template = typeof Template.Type

/** Placeholders are `{{name}}`; whitespace inside the braces is allowed. */
const placeholder = /\{\{\s*([a-zA-Z][a-zA-Z0-9-]*)\s*\}\}/g

/** The placeholders a text uses, in order of first appearance. */
export const placeholdersOf = (text: string): ReadonlyArray<string> => [
  ...new Set([...text.matchAll(placeholder)].map((m) => m[1]!))
]

export interface ParamProblems {
  readonly _tag: "ParamProblems"
  /** Each placeholder with no param, with the template field that uses it. */
  readonly missing: ReadonlyArray<{ readonly field: string; readonly param: string }>
  /** Each param whose value cannot serve its use: a record id that is not one of the record store. */
  readonly invalid: ReadonlyArray<{ readonly param: string; readonly message: string }>
}

/** Fills `{{param}}` placeholders; `extra` values (e.g. resolvedBy) are available too. */
export const fill = (text: string, values: Readonly<Record<string, string>>): string =>
  text.replace(placeholder, (whole, name: string) => (Object.hasOwn(values, name) ? values[name]! : whole))

/** A raised template: the decision to create, and the record action each option carries. */
export interface Raised {
  readonly decision: DecisionCreate
  readonly actions: ReadonlyArray<{ readonly optionId: string; readonly target: RecordTarget }>
}

/** Placeholders filled when the action runs rather than when the template is raised. */
export const resolutionPlaceholders = ["resolvedBy", "resolvedAt"] as const

/**
 * Raising a template: title and body are filled from the params, every param becomes a
 * fact, and a placeholder with no param is refused naming it. The decision's options keep the template
 * option ids; an option's action gets its record id and params now, `{{resolvedBy}}` and `{{resolvedAt}}`
 * when it runs.
 */
export const raise = (template: Template, params: TemplateParams): Result.Result<Raised, ParamProblems> => {
  const missing = [
    ...placeholdersOf(template.titleTemplate).map((param) => ({ field: "titleTemplate", param })),
    ...placeholdersOf(template.bodyTemplate ?? "").map((param) => ({ field: "bodyTemplate", param }))
  ].filter(({ param }) => !Object.hasOwn(params, param))
  const invalid: Array<{ param: string; message: string }> = []
  for (const option of template.options) {
    const action = option.action
    if (action === undefined) continue
    const recordParam = action.recordIdParam ?? "recordId"
    if (!Object.hasOwn(params, recordParam))
      missing.push({ field: `options.${option.position}.action.recordIdParam`, param: recordParam })
    else if (!isRecordId(params[recordParam]!) && !invalid.some((entry) => entry.param === recordParam))
      invalid.push({ param: recordParam, message: "must be a record id: rec followed by 14 letters or digits" })
    for (const [field, value] of Object.entries(action.fields)) {
      for (const param of placeholdersOf(value)) {
        if (!(resolutionPlaceholders as ReadonlyArray<string>).includes(param) && !Object.hasOwn(params, param)) {
          missing.push({ field: `options.${option.position}.action.fields.${field}`, param })
        }
      }
    }
  }
  if (missing.length > 0 || invalid.length > 0) return Result.fail({ _tag: "ParamProblems", missing, invalid })
  const facts: Array<Fact> = Object.entries(params).map(([label, value]) => ({ label, value }))
  const body = template.bodyTemplate === undefined ? undefined : fill(template.bodyTemplate, params)
  const decision: DecisionCreate = {
    title: fill(template.titleTemplate, params).slice(0, L.titleMax),
    roleSlug: template.roleSlug,
    ...(body === undefined ? {} : { body }),
    facts,
    urgency: template.urgency,
    ...(template.quorum === undefined ? {} : { quorum: template.quorum }),
    ...(template.escalation === undefined ? {} : { escalation: template.escalation }),
    options: template.options.map((o) => ({
      id: o.id,
      label: o.label,
      ...(o.description === undefined ? {} : { description: o.description }),
      ...(o.consequence === undefined ? {} : { consequence: o.consequence })
    }))
  }
  const actions = template.options.flatMap((o) =>
    o.action === undefined
      ? []
      : [
          {
            optionId: o.id,
            target: {
              baseId: o.action.baseId,
              tableId: o.action.tableId,
              recordId: params[o.action.recordIdParam ?? "recordId"]!,
              fields: Object.fromEntries(
                Object.entries(o.action.fields).map(([name, value]) => [name, fill(value, params)])
              )
            }
          }
        ]
  )
  return Result.succeed({ decision, actions })
}
