import type { Block, FormField, PageDocument } from "../../kernel/PageDocument.ts"
import { placeholdersOf, resolutionPlaceholders, type Template } from "../Template.ts"
import { actionId } from "./Addresses.ts"
import { urgencyLabel } from "./Labels.ts"

export interface TemplatesView {
  readonly isAdmin: boolean
  readonly templates: ReadonlyArray<Template>
}

/** The params raising a template needs: its placeholders and each record action's record id param. */
export const templateParams = (template: Template): ReadonlyArray<string> => {
  const names = [...placeholdersOf(template.titleTemplate), ...placeholdersOf(template.bodyTemplate ?? "")]
  for (const option of template.options) {
    if (option.action === undefined) continue
    names.push(option.action.recordIdParam ?? "recordId")
    for (const value of Object.values(option.action.fields)) names.push(...placeholdersOf(value))
  }
  const resolution: ReadonlyArray<string> = resolutionPlaceholders
  return [...new Set(names)].filter((name) => !resolution.includes(name))
}

const raiseForm = (template: Template): Block => {
  const fields: Array<FormField> = templateParams(template).map((name) => ({
    name,
    label: name,
    type: "text",
    required: true
  }))
  return {
    type: "form",
    id: `raise-${template.slug}`,
    fields,
    submit: { label: `Raise ${template.name}`, actionId: actionId({ _tag: "RaiseTemplate", slug: template.slug }) }
  }
}

/**
 * Templates: members raise them (a form with one field per param; raising opens the new decision), admins
 * archive them. Creating and editing a template, with its options and record actions, is done through the
 * API, whose shapes a form cannot hold.
 */
export const templatesPage = (view: TemplatesView): PageDocument => {
  const blocks: Array<Block> = []
  if (view.templates.length === 0) {
    blocks.push({ type: "callout", tone: "info", text: "No templates yet." })
  } else {
    blocks.push({
      type: "table",
      columns: [
        { key: "name", label: "Template" },
        { key: "slug", label: "Slug" },
        { key: "role", label: "Role" },
        { key: "urgency", label: "Urgency" },
        { key: "options", label: "Options" },
        { key: "status", label: "Status" }
      ],
      rows: view.templates.map((t) => ({
        name: t.name,
        slug: t.slug,
        role: t.roleSlug,
        urgency: urgencyLabel(t.urgency),
        options: t.options.map((o) => o.label).join(", "),
        status: t.archivedAt === undefined ? "Active" : "Archived"
      }))
    })
  }
  for (const template of view.templates.filter((t) => t.archivedAt === undefined)) {
    blocks.push({ type: "heading", text: template.name, level: 2 }, raiseForm(template))
    if (view.isAdmin) {
      blocks.push({
        type: "actionRow",
        actions: [
          {
            actionId: actionId({ _tag: "ArchiveTemplate", slug: template.slug }),
            label: `Archive ${template.name}`,
            style: "danger",
            confirm: `Archive ${template.name}? It can no longer be raised.`
          }
        ]
      })
    }
  }
  if (view.isAdmin) {
    blocks.push({
      type: "callout",
      tone: "info",
      text: "Create and edit templates through the API: POST /api/v1/workspace/templates."
    })
  }
  return { id: "templates", title: "Templates", description: "Reusable decisions with placeholders.", blocks }
}
