import { Redacted } from "effect"
import type { Secrets, ServerConfig } from "../Config.ts"
import { serviceSettingsOf, type ServiceAddresses } from "../Services.ts"
import type { DecisionsServiceSettings } from "./DecisionsService.ts"

/** The decisions service's settings, from the configuration (docs/configuration.md). */
export const decisionsSettingsOf = (
  config: ServerConfig,
  secrets: Secrets,
  addresses: ServiceAddresses
): DecisionsServiceSettings => {
  const production = config.environment === "production"
  return {
    // Its answers link to a decision's page in the workspace, where people's browsers reach the hub.
    routes: {
      ...serviceSettingsOf(config, secrets),
      workspaceUrl: addresses.public.hub,
      decisionsPublicUrl: addresses.public.decisions
    },
    // Without a key to seal secrets, registering a webhook or a record-store token is refused (fail closed).
    useCases: {
      secretsKey: secrets.DECISIONS_SECRETS_KEY,
      allowLoopbackHttp: !production,
      webhookRetrySchedule: config.webhookRetrySchedule,
      webhookTimeoutMs: config.webhookTimeoutMillis,
      // Answer links lead to the decisions service as browsers reach it, signed under its secrets key.
      answerLinks:
        secrets.DECISIONS_SECRETS_KEY === undefined
          ? undefined
          : { baseUrl: addresses.public.decisions, secretsKey: Redacted.value(secrets.DECISIONS_SECRETS_KEY) }
    },
    workers: {
      expirySweepMillis: config.expirySweepMillis,
      workerPollMillis: config.workerPollMillis,
      relay: {
        hubUrl: addresses.internal.hub,
        signingKey: secrets.DECISIONS_SIGNING_KEY,
        pollMillis: config.eventRelayPollMillis,
        leaseMillis: config.eventRelayLeaseMillis
      }
    }
  }
}
