/**
 * The addresses of the decisions service's pages and actions. A page id is what the workspace shows after
 * `/apps/decisions/`; an action id travels as one path segment of `POST /api/v1/actions/{actionId}`. Ids
 * the service issues itself (ULIDs, slugs) appear as they are; free-form values (option ids a caller chose,
 * emails) are base64url-encoded, so an action id never holds a `/`, a space or a dot of its own.
 */

export const serviceId = "decisions"

export const listPageIds = ["inbox", "all", "unrouted"] as const
export type ListPageId = (typeof listPageIds)[number]

export const adminPageIds = ["roles", "keys", "templates", "webhooks", "integrations"] as const
export type AdminPageId = (typeof adminPageIds)[number]

export type PageAddress =
  | { readonly _tag: "List"; readonly list: ListPageId }
  | { readonly _tag: "Decision"; readonly decisionId: string }
  | { readonly _tag: "Admin"; readonly page: AdminPageId }

const decisionPrefix = "decision-"

export const decisionPageId = (decisionId: string): string => `${decisionPrefix}${decisionId}`

/** The workspace-relative link of one of our pages, e.g. `/apps/decisions/decision-01J…`. */
export const pageHref = (pageId: string, query?: Readonly<Record<string, string>>): string => {
  const search = query === undefined ? "" : new URLSearchParams(query).toString()
  return `/apps/${serviceId}/${pageId}${search === "" ? "" : `?${search}`}`
}

export const decisionHref = (decisionId: string): string => pageHref(decisionPageId(decisionId))

// Ids the service issues: ULIDs, `act_…`, slugs. A decision id read from a page id is checked the same way.
const plainId = /^[A-Za-z0-9_-]{1,64}$/

export const parsePageId = (id: string): PageAddress | undefined => {
  if ((listPageIds as ReadonlyArray<string>).includes(id)) return { _tag: "List", list: id as ListPageId }
  if ((adminPageIds as ReadonlyArray<string>).includes(id)) return { _tag: "Admin", page: id as AdminPageId }
  if (id.startsWith(decisionPrefix)) {
    const decisionId = id.slice(decisionPrefix.length)
    if (plainId.test(decisionId)) return { _tag: "Decision", decisionId }
  }
  return undefined
}

const encode = (value: string): string => Buffer.from(value, "utf8").toString("base64url")

const decode = (segment: string): string | undefined => {
  if (!/^[A-Za-z0-9_-]{1,700}$/.test(segment)) return undefined
  const value = Buffer.from(segment, "base64url").toString("utf8")
  // Only the canonical spelling names a value, so one value has exactly one action id.
  return encode(value) === segment ? value : undefined
}

/** Every action a page offers, as the service runs it. */
export type PageActionAddress =
  /** Without `optionId` in the address, the form's `optionId` value names the option. */
  | { readonly _tag: "Choose"; readonly decisionId: string; readonly optionId?: string | undefined }
  | { readonly _tag: "Decline"; readonly decisionId: string }
  | { readonly _tag: "Ask"; readonly decisionId: string }
  | { readonly _tag: "Route"; readonly decisionId: string }
  | { readonly _tag: "RetryAction"; readonly decisionId: string; readonly actionId: string }
  | { readonly _tag: "CreateRole" }
  | { readonly _tag: "ArchiveRole"; readonly slug: string }
  | { readonly _tag: "Assign"; readonly slug: string }
  | { readonly _tag: "Unassign"; readonly slug: string; readonly email: string }
  | { readonly _tag: "CreateKey" }
  | { readonly _tag: "RotateKey"; readonly keyId: string }
  | { readonly _tag: "RevokeKey"; readonly keyId: string }
  | { readonly _tag: "RaiseTemplate"; readonly slug: string }
  | { readonly _tag: "ArchiveTemplate"; readonly slug: string }
  | { readonly _tag: "DisableWebhook"; readonly webhookId: string }
  | { readonly _tag: "SetRecordStore" }
  | { readonly _tag: "UnsetRecordStore" }

/** The action id of an address: the inverse of `parseActionId`. */
export const actionId = (action: PageActionAddress): string => {
  switch (action._tag) {
    case "Choose":
      return action.optionId === undefined
        ? `decision.${action.decisionId}.choose`
        : `decision.${action.decisionId}.choose.${encode(action.optionId)}`
    case "Decline":
      return `decision.${action.decisionId}.decline`
    case "Ask":
      return `decision.${action.decisionId}.ask`
    case "Route":
      return `decision.${action.decisionId}.route`
    case "RetryAction":
      return `decision.${action.decisionId}.retry.${encode(action.actionId)}`
    case "CreateRole":
      return "roles.create"
    case "ArchiveRole":
      return `role.${action.slug}.archive`
    case "Assign":
      return `role.${action.slug}.assign`
    case "Unassign":
      return `role.${action.slug}.unassign.${encode(action.email)}`
    case "CreateKey":
      return "keys.create"
    case "RotateKey":
      return `key.${action.keyId}.rotate`
    case "RevokeKey":
      return `key.${action.keyId}.revoke`
    case "RaiseTemplate":
      return `template.${action.slug}.raise`
    case "ArchiveTemplate":
      return `template.${action.slug}.archive`
    case "DisableWebhook":
      return `webhook.${action.webhookId}.disable`
    case "SetRecordStore":
      return "recordStore.set"
    case "UnsetRecordStore":
      return "recordStore.unset"
  }
}

/** Reads an action id; undefined for anything that is not exactly one of ours. */
export const parseActionId = (id: string): PageActionAddress | undefined => {
  const parts = id.split(".")
  const [kind, target, verb, extra] = parts
  if (parts.length === 2) {
    if (id === "roles.create") return { _tag: "CreateRole" }
    if (id === "keys.create") return { _tag: "CreateKey" }
    if (id === "recordStore.set") return { _tag: "SetRecordStore" }
    if (id === "recordStore.unset") return { _tag: "UnsetRecordStore" }
    return undefined
  }
  if (target === undefined || !plainId.test(target) || parts.length > 4) return undefined
  const arg = extra === undefined ? undefined : decode(extra)
  if (extra !== undefined && arg === undefined) return undefined
  const one = <A>(value: A): A | undefined => (extra === undefined ? value : undefined)
  const two = <A>(make: (arg: string) => A): A | undefined => (arg === undefined ? undefined : make(arg))
  switch (`${kind}.${verb}`) {
    case "decision.choose":
      return arg === undefined
        ? { _tag: "Choose", decisionId: target }
        : { _tag: "Choose", decisionId: target, optionId: arg }
    case "decision.decline":
      return one({ _tag: "Decline", decisionId: target })
    case "decision.ask":
      return one({ _tag: "Ask", decisionId: target })
    case "decision.route":
      return one({ _tag: "Route", decisionId: target })
    case "decision.retry":
      return two((actionId) => ({ _tag: "RetryAction", decisionId: target, actionId }))
    case "role.archive":
      return one({ _tag: "ArchiveRole", slug: target })
    case "role.assign":
      return one({ _tag: "Assign", slug: target })
    case "role.unassign":
      return two((email) => ({ _tag: "Unassign", slug: target, email }))
    case "key.rotate":
      return one({ _tag: "RotateKey", keyId: target })
    case "key.revoke":
      return one({ _tag: "RevokeKey", keyId: target })
    case "template.raise":
      return one({ _tag: "RaiseTemplate", slug: target })
    case "template.archive":
      return one({ _tag: "ArchiveTemplate", slug: target })
    case "webhook.disable":
      return one({ _tag: "DisableWebhook", webhookId: target })
    default:
      return undefined
  }
}
