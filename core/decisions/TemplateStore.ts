import { Context, Effect } from "effect"
import type { Template } from "./Template.ts"

/**
 * Decision templates, per organization; slugs are unique per organization and never change.
 * `create` answers false when the slug is taken; `replace` writes a whole template (its slug unchanged).
 */
export class TemplateStore extends Context.Service<
  TemplateStore,
  {
    readonly list: (organizationId: string) => Effect.Effect<ReadonlyArray<Template>>
    readonly get: (organizationId: string, slug: string) => Effect.Effect<Template | undefined>
    readonly create: (organizationId: string, template: Template) => Effect.Effect<boolean>
    readonly replace: (organizationId: string, template: Template) => Effect.Effect<boolean>
  }
>()("core/decisions/TemplateStore") {}
