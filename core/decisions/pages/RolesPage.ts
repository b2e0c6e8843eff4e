import type { Block, PageDocument } from "../../kernel/PageDocument.ts"
import type { Assignment, Role } from "../Role.ts"
import { actionId } from "./Addresses.ts"
import { timeLabel } from "./Labels.ts"

export interface RolesView {
  readonly isAdmin: boolean
  readonly roles: ReadonlyArray<{ readonly role: Role; readonly members: ReadonlyArray<Assignment> }>
}

const roleSection = (view: RolesView, role: Role, members: ReadonlyArray<Assignment>): Array<Block> => {
  const archived = role.archivedAt !== undefined
  const blocks: Array<Block> = [
    { type: "heading", text: `${role.name} (${role.slug})${archived ? ", archived" : ""}`, level: 2 },
    ...(role.description === undefined ? [] : [{ type: "text" as const, text: role.description }]),
    members.length === 0
      ? { type: "callout", tone: archived ? "info" : "warning", text: "Nobody holds this role." }
      : {
          type: "table",
          columns: [
            { key: "member", label: "Member" },
            { key: "addedBy", label: "Added by" },
            { key: "addedAt", label: "Added" }
          ],
          rows: members.map((m) => ({ member: m.memberEmail, addedBy: m.addedBy, addedAt: timeLabel(m.addedAt) }))
        }
  ]
  if (!view.isAdmin || archived) return blocks
  if (members.length > 0) {
    blocks.push({
      type: "actionRow",
      actions: members.map((m) => ({
        actionId: actionId({ _tag: "Unassign", slug: role.slug, email: m.memberEmail }),
        label: `Remove ${m.memberEmail}`,
        style: "danger" as const,
        confirm: `Remove ${m.memberEmail} from ${role.name}?`
      }))
    })
  }
  blocks.push(
    {
      type: "form",
      id: `assign-${role.slug}`,
      fields: [{ name: "memberEmail", label: "Add a member", type: "email", required: true }],
      submit: { label: "Add", actionId: actionId({ _tag: "Assign", slug: role.slug }) }
    },
    {
      type: "actionRow",
      actions: [
        {
          actionId: actionId({ _tag: "ArchiveRole", slug: role.slug }),
          label: "Archive role",
          style: "danger",
          description: "Decisions routed to an archived role become unrouted.",
          confirm: `Archive ${role.name}?`
        }
      ]
    }
  )
  return blocks
}

/** Decision roles and who holds them; admins add and remove members, create and archive roles. */
export const rolesPage = (view: RolesView): PageDocument => ({
  id: "roles",
  title: "Roles",
  description: "Decisions are routed to the members who hold their role.",
  blocks: [
    ...(view.roles.length === 0 ? [{ type: "callout" as const, tone: "info" as const, text: "No roles yet." }] : []),
    ...view.roles.flatMap(({ role, members }) => roleSection(view, role, members)),
    ...(view.isAdmin
      ? [
          { type: "heading" as const, text: "New role", level: 2 },
          {
            type: "form" as const,
            id: "create-role",
            fields: [
              { name: "slug", label: "Slug (lowercase words joined by -)", type: "text" as const, required: true },
              { name: "name", label: "Name", type: "text" as const, required: true },
              { name: "description", label: "Description", type: "textarea" as const }
            ],
            submit: { label: "Create role", actionId: actionId({ _tag: "CreateRole" }) }
          }
        ]
      : [])
  ]
})
