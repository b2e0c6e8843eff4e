import { Effect, Layer } from "effect"
import type { Template } from "../../../core/decisions/Template.ts"
import { TemplateStore } from "../../../core/decisions/TemplateStore.ts"

export const TemplateStoreMemory = Layer.sync(TemplateStore, () => {
  const byOrganization = new Map<string, Map<string, Template>>()
  const of = (organizationId: string) => {
    let rows = byOrganization.get(organizationId)
    if (rows === undefined) byOrganization.set(organizationId, (rows = new Map()))
    return rows
  }
  return TemplateStore.of({
    list: (organizationId) =>
      Effect.sync(() =>
        [...of(organizationId).values()].sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0))
      ),
    get: (organizationId, slug) => Effect.sync(() => of(organizationId).get(slug)),
    create: (organizationId, template) =>
      Effect.sync(() => {
        const rows = of(organizationId)
        if (rows.has(template.slug)) return false
        rows.set(template.slug, template)
        return true
      }),
    replace: (organizationId, template) =>
      Effect.sync(() => {
        const rows = of(organizationId)
        if (!rows.has(template.slug)) return false
        rows.set(template.slug, template)
        return true
      })
  })
})
