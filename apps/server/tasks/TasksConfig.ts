import { Redacted } from "effect"
import type { Secrets, ServerConfig } from "../Config.ts"
import { serviceSettingsOf, type ServiceAddresses } from "../Services.ts"
import { tasksOidcClientId } from "./TasksRoutes.ts"
import type { TasksServiceSettings } from "./TasksService.ts"

/** The task inbox's settings, from the configuration (docs/configuration.md). */
export const tasksSettingsOf = (
  config: ServerConfig,
  secrets: Secrets,
  addresses: ServiceAddresses
): TasksServiceSettings => {
  const production = config.environment === "production"
  const publicUrl = addresses.public.tasks
  return {
    routes: serviceSettingsOf(config, secrets),
    web: {
      publicUrl,
      hubIssuer: addresses.public.hub,
      clientId: tasksOidcClientId,
      clientSecret: secrets.TASKS_OIDC_CLIENT_SECRET,
      secretsKey: secrets.TASKS_SECRETS_KEY === undefined ? undefined : Redacted.value(secrets.TASKS_SECRETS_KEY),
      allowHttp: !production
    },
    inbox: { publicUrl, machineKeys: config.tasksMachineKeys },
    relay: {
      hubUrl: addresses.internal.hub,
      signingKey: secrets.TASKS_SIGNING_KEY,
      pollMillis: config.eventRelayPollMillis,
      leaseMillis: config.eventRelayLeaseMillis
    }
  }
}
