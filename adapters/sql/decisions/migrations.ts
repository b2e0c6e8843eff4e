import type { Migration } from "../Migrator.ts"
import { idempotencyMigration } from "../platform/0001_idempotency.ts"
import { decisionsTable } from "./0002_decisions.ts"
import { rolesTables } from "./0003_roles.ts"
import { callerKeysTable } from "./0004_caller_keys.ts"
import { templatesTable } from "./0005_templates.ts"
import { webhooksTable } from "./0006_webhooks.ts"
import { actionsAndOutbox } from "./0007_actions_and_outbox.ts"
import { eventsTables } from "./0008_events.ts"
import { mcpSessionsTable } from "./0010_mcp_sessions.ts"
import { organizationStatusesTables } from "./0011_organization_statuses.ts"
import { escalationColumns } from "./0012_escalation.ts"
import { answerLinkUsesTable } from "./0014_answer_link_uses.ts"

/**
 * The decisions service's schema, `decisions`: its idempotency keys, decisions, roles with their
 * assignments, caller keys, templates, webhook endpoints
 * with their delivery outbox, record-store credentials, the event outbox for the hub, the organization
 * admins seen, agents' MCP sessions and organizations'
 * statuses as the hub's facts told them, and the answer links used. Apply with `migrationsLayer("decisions", decisionsMigrations)`.
 */
export const decisionsMigrations: ReadonlyArray<Migration> = [
  idempotencyMigration("decisions", 1),
  decisionsTable,
  rolesTables,
  callerKeysTable,
  templatesTable,
  webhooksTable,
  actionsAndOutbox,
  eventsTables,
  mcpSessionsTable,
  organizationStatusesTables,
  escalationColumns,
  answerLinkUsesTable
]
