import { Layer } from "effect"
import { CallerAuthLayer, WorkspaceAuthLayer } from "../../../adapters/http/decisions/AuthLayers.ts"
import { DecisionsApi } from "../../../adapters/http/decisions/Api.ts"
import { CallerBudget } from "../../../adapters/http/decisions/CallerBudget.ts"
import {
  DecisionsHandlers,
  DecisionsUniformHandlers,
  WorkspaceAddress
} from "../../../adapters/http/decisions/Handlers.ts"
import { IdempotencyLayers } from "../../../adapters/http/IdempotencyLayers.ts"
import { serviceRoutes } from "../../../adapters/http/ServiceHttp.ts"
import { DecisionsServiceKeyLayer } from "../../../adapters/http/uniform/ServiceKeyLayer.ts"
import { decisionsMcpRoutes } from "../../../adapters/mcp/DecisionsMcp.ts"
import { answerRoutes } from "../../../adapters/http/decisions/AnswerRoutes.ts"
import { consumedFacts, FactIntake } from "../../../core/events/FactIntake.ts"
import type { Manifest } from "../../../core/kernel/index.ts"
import { kib, reveal, version, type ServiceSettings } from "../Services.ts"

export const decisionsManifest: Manifest = {
  service: "decisions",
  displayName: "Decisions",
  tagline: "Human-in-the-loop decisions that agents and services post and people answer",
  contractVersion: "v1",
  requiredTier: "free",
  workspaceRoute: "/decisions",
  capabilities: {
    summary: true,
    activity: true,
    search: true,
    notifications: true,
    deepLinks: true,
    pages: true,
    embed: null
  },
  emittedEvents: ["decisions.notification.created"],
  consumesFacts: consumedFacts
}

/** Requires the decisions use cases (`Decisions`), an IdempotencyStore for the `decisions` schema, and Readiness. */
export const decisionsRoutes = (settings: ServiceSettings) => {
  const auth = {
    production: settings.production,
    apiKey: settings.decisionsApiKey,
    embedKey: settings.decisionsEmbedKey,
    issuer: settings.platformIssuer,
    callerRequestsPerMinute: settings.decisionsCallerRequestsPerMinute,
    userRequestsPerMinute: settings.decisionsUserRequestsPerMinute
  }
  const http = serviceRoutes({
    api: DecisionsApi,
    handlers: Layer.mergeAll(
      DecisionsUniformHandlers({ manifest: decisionsManifest, version: version("decisions", settings.build) }).pipe(
        Layer.provide(FactIntake.layer({ signingKey: reveal(settings.decisionsSigningKey) }))
      ),
      DecisionsHandlers
    ).pipe(Layer.provide(Layer.succeed(WorkspaceAddress, settings.workspaceUrl))),
    errors: { dialect: "decisions", maxBodyBytes: 256 * kib }
  }).pipe(
    Layer.provide(
      Layer.mergeAll(
        DecisionsServiceKeyLayer({ key: settings.decisionsApiKey, production: settings.production }),
        CallerAuthLayer(auth),
        WorkspaceAuthLayer(auth),
        IdempotencyLayers({ dialect: "decisions", secretsKey: reveal(settings.decisionsSecretsKey) })
      )
    )
  )
  // The MCP server at /mcp, behind the caller plane's key and its one budget.
  return Layer.mergeAll(
    http,
    // The page of the answer links notifications carry, at /answer: the link's token is its credential.
    settings.decisionsPublicUrl === undefined
      ? Layer.empty
      : answerRoutes({ publicUrl: settings.decisionsPublicUrl, workspaceUrl: settings.workspaceUrl }),
    decisionsMcpRoutes({
      build: settings.build,
      secretsKey: reveal(settings.decisionsSecretsKey),
      workspaceUrl: settings.workspaceUrl
    })
  ).pipe(Layer.provide(CallerBudget.layer(settings.decisionsCallerRequestsPerMinute)))
}
