import type { Block, PageDocument } from "../../kernel/PageDocument.ts"
import type { ApiKey } from "../CallerKeyStore.ts"
import { actionId } from "./Addresses.ts"
import { timeLabel } from "./Labels.ts"

/**
 * Caller keys (org admins): the list shows each key's prefix only; a new or rotated key is in the action's
 * answer (`secret`), once, and never on a page.
 */
export const keysPage = (keys: ReadonlyArray<ApiKey>): PageDocument => {
  const active = keys.filter((k) => k.revokedAt === undefined)
  const blocks: Array<Block> = [
    keys.length === 0
      ? { type: "callout", tone: "info", text: "No caller keys yet. Agents and services need one to post decisions." }
      : {
          type: "table",
          columns: [
            { key: "name", label: "Name" },
            { key: "prefix", label: "Key" },
            { key: "createdBy", label: "Created by" },
            { key: "created", label: "Created" },
            { key: "lastUsed", label: "Last used" },
            { key: "status", label: "Status" }
          ],
          rows: keys.map((k) => ({
            name: k.name,
            prefix: `${k.keyPrefix}…`,
            createdBy: k.createdBy,
            created: timeLabel(k.createdAt),
            lastUsed: k.lastUsedAt === undefined ? "Never" : timeLabel(k.lastUsedAt),
            status: k.revokedAt === undefined ? "Active" : `Revoked ${timeLabel(k.revokedAt)}`
          }))
        }
  ]
  if (active.length > 0) {
    blocks.push({
      type: "actionRow",
      actions: active.flatMap((k) => [
        {
          actionId: actionId({ _tag: "RotateKey", keyId: k.id }),
          label: `Rotate ${k.name}`,
          description: "Issue a new value; the old one stops working at once.",
          confirm: `Rotate ${k.name}? The current value stops working at once.`
        },
        {
          actionId: actionId({ _tag: "RevokeKey", keyId: k.id }),
          label: `Revoke ${k.name}`,
          style: "danger" as const,
          confirm: `Revoke ${k.name}? Callers using it are refused at once.`
        }
      ])
    })
  }
  blocks.push(
    { type: "heading", text: "New key", level: 2 },
    {
      type: "form",
      id: "create-key",
      fields: [{ name: "name", label: "Name (the caller it is for)", type: "text", required: true }],
      submit: { label: "Create key", actionId: actionId({ _tag: "CreateKey" }) }
    }
  )
  return {
    id: "keys",
    title: "Caller keys",
    description: "Keys agents and services use to post decisions (Authorization: Bearer dcd_…).",
    blocks
  }
}
