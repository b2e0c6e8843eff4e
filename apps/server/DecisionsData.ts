import { Layer } from "effect"
import { CallerKeyStoreSql } from "../../adapters/sql/decisions/CallerKeyStoreSql.ts"
import { DecisionSignalsSql } from "../../adapters/sql/decisions/DecisionSignalsSql.ts"
import { DecisionStoreSql } from "../../adapters/sql/decisions/DecisionStoreSql.ts"
import { RoleStoreWithCacheSql } from "../../adapters/sql/decisions/RoleStoreWithCacheSql.ts"
import { TemplateStoreSql } from "../../adapters/sql/decisions/TemplateStoreSql.ts"
import { McpSessionStoreSql } from "../../adapters/sql/decisions/McpSessionStoreSql.ts"
import { RecordStoreCredentialsSql } from "../../adapters/sql/decisions/RecordStoreCredentialsSql.ts"
import { WebhookOutboxSql } from "../../adapters/sql/decisions/WebhookOutboxSql.ts"
import { WebhookStoreSql } from "../../adapters/sql/decisions/WebhookStoreSql.ts"
import { AnswerLinkUsesSql } from "../../adapters/sql/decisions/AnswerLinkUsesSql.ts"
import { IdempotencyStoreSql } from "../../adapters/sql/IdempotencyStoreSql.ts"
import { OrganizationAdminsSql } from "../../adapters/sql/decisions/OrganizationAdminsSql.ts"
import { OrganizationStatusesSql } from "../../adapters/sql/OrganizationStatusesSql.ts"
import { ProducerOutboxSql } from "../../adapters/sql/ProducerOutboxSql.ts"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"

/** The decisions service's event outbox for the hub, `decisions.event_outbox`. */
export const DecisionsOutboxSql = ProducerOutboxSql({ schema: "decisions", table: "event_outbox" })

/**
 * The decisions service's data in its own Postgres schema, `decisions`. Its wake-ups wait for the commit of
 * the unit of work they are sent in: any TransactionsSql over the same client sees the same units.
 */
export const DecisionsDataSql = Layer.mergeAll(
  DecisionStoreSql,
  RoleStoreWithCacheSql,
  CallerKeyStoreSql,
  DecisionSignalsSql.pipe(Layer.provide(TransactionsSql)),
  TemplateStoreSql,
  WebhookStoreSql,
  WebhookOutboxSql,
  RecordStoreCredentialsSql,
  DecisionsOutboxSql,
  OrganizationAdminsSql,
  McpSessionStoreSql,
  OrganizationStatusesSql("decisions"),
  IdempotencyStoreSql("decisions"),
  AnswerLinkUsesSql
)
