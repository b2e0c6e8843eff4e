import { Redacted } from "effect"
import type { ServiceSettings } from "../../apps/server/Services.ts"
import { testServiceSecretsKey } from "./DecisionsMemory.ts"

/**
 * The decisions service's credentials in tests: the key the hub calls it with, the key identity tokens are
 * signed with, and the tokens' issuer.
 */
export const testDecisionsKeys = {
  apiKey: "decisions-service-key-for-tests",
  embedKey: "decisions-embed-key-for-tests-0123456789",
  issuer: "platform-hub"
} as const

/** The key the hub signs facts with in tests, for both services (each holds its own in production). */
export const testSigningKey = "service-signing-key-for-tests-0123"

/**
 * The services' settings as tests run them: not production, the decisions keys of `testDecisionsKeys`, no task
 * inbox key, budgets no test reaches (1,000 requests a minute), every service's secrets key set and both
 * services' signing key `testSigningKey`.
 * `overrides` change what one test is about.
 */
export const testServiceSettings = (overrides: Partial<ServiceSettings> = {}): ServiceSettings => ({
  production: false,
  build: "test",
  platformIssuer: testDecisionsKeys.issuer,
  decisionsApiKey: Redacted.make(testDecisionsKeys.apiKey),
  decisionsEmbedKey: Redacted.make(testDecisionsKeys.embedKey),
  tasksApiKey: undefined,
  decisionsCallerRequestsPerMinute: 1000,
  decisionsUserRequestsPerMinute: 1000,
  hubSecretsKey: testServiceSecretsKey,
  decisionsSecretsKey: testServiceSecretsKey,
  tasksSecretsKey: testServiceSecretsKey,
  decisionsSigningKey: Redacted.make(testSigningKey),
  tasksSigningKey: Redacted.make(testSigningKey),
  ...overrides
})
