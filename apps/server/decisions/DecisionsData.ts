import { Layer } from "effect"
import { CallerKeyStoreSql } from "../../../adapters/sql/decisions/CallerKeyStoreSql.ts"
import { DecisionSignalsSql } from "../../../adapters/sql/decisions/DecisionSignalsSql.ts"
import { DecisionStoreSql } from "../../../adapters/sql/decisions/DecisionStoreSql.ts"
import { FlowStatsSql } from "../../../adapters/sql/decisions/FlowStatsSql.ts"
import { RoleStoreWithCacheSql } from "../../../adapters/sql/decisions/RoleStoreWithCacheSql.ts"
import { TemplateStoreSql } from "../../../adapters/sql/decisions/TemplateStoreSql.ts"
import { McpSessionStoreSql } from "../../../adapters/sql/decisions/McpSessionStoreSql.ts"
import { RecordStoreCredentialsSql } from "../../../adapters/sql/decisions/RecordStoreCredentialsSql.ts"
import { WebhookOutboxSql } from "../../../adapters/sql/decisions/WebhookOutboxSql.ts"
import { WebhookStoreSql } from "../../../adapters/sql/decisions/WebhookStoreSql.ts"
import { AnswerLinkUsesSql } from "../../../adapters/sql/decisions/AnswerLinkUsesSql.ts"
import { IdempotencyStoreSql } from "../../../adapters/sql/IdempotencyStoreSql.ts"
import { OrganizationAdminsSql } from "../../../adapters/sql/decisions/OrganizationAdminsSql.ts"
import { OrganizationStatusesSql } from "../../../adapters/sql/OrganizationStatusesSql.ts"
import { ProducerOutboxSql } from "../../../adapters/sql/ProducerOutboxSql.ts"
import { migrationsLayer } from "../../../adapters/sql/Migrator.ts"
import { decisionsMigrations } from "../../../adapters/sql/decisions/migrations.ts"

/** The decisions service's event outbox for the hub, `decisions.event_outbox`. */
export const DecisionsOutboxSql = ProducerOutboxSql({ schema: "decisions", table: "event_outbox" })

/**
 * The decisions service's data in its own Postgres schema, `decisions` (on a Postgres server or the embedded
 * database alike). Needs the database's one `Transactions` (TransactionsSql): its wake-ups wait for the
 * commit of the unit of work they are sent in.
 */
export const DecisionsDataSql = Layer.mergeAll(
  DecisionStoreSql,
  FlowStatsSql,
  RoleStoreWithCacheSql,
  CallerKeyStoreSql,
  DecisionSignalsSql,
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

/** `DecisionsDataSql` on a database whose `decisions` schema is migrated first: what the server runs on. */
export const DecisionsDataMigrated = DecisionsDataSql.pipe(
  Layer.provide(migrationsLayer("decisions", decisionsMigrations))
)
