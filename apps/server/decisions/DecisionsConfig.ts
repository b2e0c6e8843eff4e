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
    routes: { ...serviceSettingsOf(config, secrets), workspaceUrl: addresses.public.hub },
    // Without a key to seal secrets, registering a webhook or a record-store token is refused (fail closed).
    useCases: {
      secretsKey: secrets.DECISIONS_SECRETS_KEY,
      allowLoopbackHttp: !production,
      webhookRetrySchedule: config.webhookRetrySchedule,
      webhookTimeoutMs: config.webhookTimeoutMillis
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
