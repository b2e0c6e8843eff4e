import { Option, Redacted } from "effect"
import { ServiceCallsHttp } from "../../../adapters/http/ServiceCallsHttp.ts"
import { ServiceProbeHttp } from "../../../adapters/http/ServiceProbeHttp.ts"
import { guardedLookup } from "../../../adapters/http/WebhookSenderHttp.ts"
import type { Secrets, ServerConfig } from "../Config.ts"
import { generateSigningKey } from "../DevSecrets.ts"
import { reveal, serviceSettingsOf, type ServiceAddresses } from "../Services.ts"
import { tasksOidcClientId } from "../tasks/TasksRoutes.ts"
import { HubChannelsFromConfig } from "./HubChannels.ts"
import type { HubOpenIdSettings } from "./HubRoutes.ts"
import type { HubServiceSettings } from "./HubService.ts"
import { MailerFromConfig } from "./Mail.ts"

/**
 * The hub's settings, from the configuration (docs/configuration.md). `oidcSigningKey`: the key that signs
 * its OpenID provider's ID tokens (outside production one of this process's own when none is given).
 */
export const hubSettingsOf = (
  config: ServerConfig,
  secrets: Secrets,
  addresses: ServiceAddresses,
  oidcSigningKey: Redacted.Redacted<string> | undefined
): HubServiceSettings => {
  const production = config.environment === "production"
  // Where browsers reach the hub: the issuer of its OpenID provider, the base of every link it sends.
  const publicUrl = addresses.public.hub
  const openId = hubOpenIdSettings({
    config,
    secrets,
    hubPublic: publicUrl,
    tasksUrl: addresses.public.tasks,
    production,
    signingKey: oidcSigningKey ?? Option.getOrUndefined(config.hubOidcSigningKey)
  })
  return {
    routes: serviceSettingsOf(config, secrets),
    hubRoutes: {
      adminKey: secrets.HUB_ADMIN_KEY,
      contextKeys: config.hubContextKeys,
      callsPerMinute: config.hubCallsPerMinute,
      providerProfiles: config.hubProviderProfiles,
      signInWithProvider: openId.signIn !== undefined,
      signIn: {
        publicUrl,
        perAddress: config.hubSignInPerAddress,
        perClient: config.hubSignInPerClient,
        windowMillis: 15 * 60_000
      }
    },
    openId,
    // Without HUB_SECRETS_KEY the registry fails closed: nothing is registered and signed routes refuse.
    useCases: {
      secretsKey: reveal(secrets.HUB_SECRETS_KEY),
      allowLoopbackHttp: !production,
      issuer: config.platformIssuer,
      publicUrl,
      events: {
        quota: { limit: config.hubEventsPerMinute, windowMillis: 60_000 },
        processor: {
          leaseMillis: config.hubEventLeaseMillis,
          emailBatchMillis: config.hubEmailBatchMillis,
          // While accepts are handed over, other servers' events and a crashed one's are looked for once a poll.
          claimEveryMillis: config.hubWorkerPollMillis
        },
        deliveryRetrySchedule: config.hubDeliveryRetrySchedule
      },
      signIn: {
        sessions: {
          idleMillis: config.hubSessionIdleMinutes * 60_000,
          maxMillis: config.hubSessionMaxHours * 3_600_000
        },
        emailLinkMillis: config.hubSignInLinkMinutes * 60_000,
        emailLinksPerHour: config.hubSignInLinksPerHour,
        viewerLinkMillis: config.hubViewerLinkHours * 3_600_000
      }
    },
    // The service-data plane's upstreams: the expert roster, the shortener.
    serviceData: {
      publicUrl,
      expertRoster: Option.match(Option.all([config.hubExpertRosterUrl, config.hubExpertRosterKey]), {
        onNone: () => undefined,
        onSome: ([url, key]) => ({ url, key })
      }),
      shortenerUrl: Option.getOrUndefined(config.hubShortenerUrl),
      allowLoopback: !production
    },
    workers: { pollMillis: config.hubWorkerPollMillis, retrySchedule: config.hubFactRetrySchedule },
    firstParty: {
      decisionsBaseUrl: addresses.internal.decisions,
      tasksBaseUrl: addresses.internal.tasks,
      tasksAppUrl: addresses.public.tasks,
      decisionsApiKey: secrets.DECISIONS_API_KEY,
      decisionsEmbedKey: secrets.DECISIONS_EMBED_KEY,
      decisionsSigningKey: secrets.DECISIONS_SIGNING_KEY,
      tasksApiKey: secrets.TASKS_API_KEY,
      tasksSigningKey: secrets.TASKS_SIGNING_KEY,
      attempts: 30
    }
  }
}

/**
 * The hub's ways out of the process: guarded calls and probes of registered services (never a private address
 * in production), one mail server connection pool for sign-in links and notification emails (`print`: where
 * emails go outside production without a mail server), the chat and push channels.
 */
export const hubAdaptersOf = (config: ServerConfig, secrets: Secrets, print?: ((text: string) => void) | undefined) => {
  const production = config.environment === "production"
  return {
    serviceCalls: ServiceCallsHttp({ allowLoopback: !production, guardLookup: guardedLookup }),
    serviceProbe: ServiceProbeHttp({ allowLoopback: !production, guardLookup: guardedLookup }),
    mailer: MailerFromConfig(config, print),
    channels: HubChannelsFromConfig(config, secrets)
  }
}

/**
 * The hub's OpenID settings. Its provider needs the hub's secrets key and a signing key (outside production
 * one is made when none is given), and registers the task inbox when TASKS_OIDC_CLIENT_SECRET is set.
 * Signing in with the organisation's provider needs HUB_OIDC_ISSUER, HUB_OIDC_CLIENT_ID and
 * HUB_OIDC_CLIENT_SECRET, and the hub's secrets key.
 */
export const hubOpenIdSettings = (options: {
  readonly config: ServerConfig
  readonly secrets: Secrets
  readonly hubPublic: string
  readonly tasksUrl: string
  readonly production: boolean
  readonly signingKey: Redacted.Redacted<string> | undefined
}): HubOpenIdSettings => {
  const { config, secrets, production } = options
  const secretsKey = reveal(secrets.HUB_SECRETS_KEY)
  const signingKey = options.signingKey ?? (production ? undefined : Redacted.make(generateSigningKey()))
  const tasksSecret = secrets.TASKS_OIDC_CLIENT_SECRET
  const upstream = config.hubOidc
  return {
    provider:
      secretsKey === undefined || signingKey === undefined
        ? undefined
        : {
            issuer: options.hubPublic,
            signingKey,
            secretsKey,
            signInPath: "/",
            clients:
              tasksSecret === undefined
                ? []
                : [
                    {
                      clientId: tasksOidcClientId,
                      clientSecret: tasksSecret,
                      redirectUris: [`${options.tasksUrl}/auth/callback`]
                    }
                  ]
          },
    signIn:
      secretsKey === undefined ||
      Option.isNone(upstream.issuer) ||
      Option.isNone(upstream.clientId) ||
      Option.isNone(upstream.clientSecret)
        ? undefined
        : {
            hubUrl: options.hubPublic,
            issuer: upstream.issuer.value,
            clientId: upstream.clientId.value,
            clientSecret: upstream.clientSecret.value,
            secretsKey,
            allowHttp: !production
          }
  }
}
