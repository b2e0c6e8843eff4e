import type { Block, PageDocument } from "../../kernel/PageDocument.ts"
import type { RecordStoreStatus } from "../RecordActions.ts"
import { actionId } from "./Addresses.ts"
import { timeLabel } from "./Labels.ts"

/**
 * The record-store credentials template record actions use (org admins): whether they are set and by whom,
 * never the token; a form sets (replaces) them and an action removes them.
 */
export const integrationsPage = (status: RecordStoreStatus): PageDocument => {
  const blocks: Array<Block> = [
    { type: "heading", text: "Record store", level: 2 },
    status.configured
      ? {
          type: "callout",
          tone: "success",
          text: `Connected${status.updatedBy === undefined ? "" : ` by ${status.updatedBy}`}${
            status.updatedAt === undefined ? "" : `, ${timeLabel(status.updatedAt)}`
          }. The token is kept encrypted and never shown.`
        }
      : {
          type: "callout",
          tone: "warning",
          text: "Not connected: record actions of chosen options wait until a token is set."
        },
    {
      type: "form",
      id: "record-store",
      fields: [
        { name: "token", label: status.configured ? "Replace the token" : "Token", type: "text", required: true }
      ],
      submit: { label: "Save token", actionId: actionId({ _tag: "SetRecordStore" }) }
    }
  ]
  if (status.configured) {
    blocks.push({
      type: "actionRow",
      actions: [
        {
          actionId: actionId({ _tag: "UnsetRecordStore" }),
          label: "Remove token",
          style: "danger",
          description: "Record actions wait for setup until a token is set again.",
          confirm: "Remove the record-store token?"
        }
      ]
    })
  }
  return {
    id: "integrations",
    title: "Integrations",
    description: "Credentials the service uses for template record actions.",
    blocks
  }
}
