import { Effect, Redacted } from "effect"
import { mint } from "../../core/auth/IdentityToken.ts"
import {
  callHub,
  outcomeOf,
  parseCommand,
  tokenFromHub,
  usage,
  type Outcome,
  type TokenRequest
} from "./CliCommands.ts"
import { presentSecrets, ServerConfig, type SecretName, type Secrets } from "./Config.ts"
import { resolveSecrets } from "./DevSecrets.ts"

/** First-party services whose embed key the server's configuration holds: tokens for them can be minted here. */
const embedKeys: Record<string, SecretName> = { decisions: "DECISIONS_EMBED_KEY" }

const usageError = (message: string): Outcome => ({ stderr: `${message}\n\n${usage}`, exitCode: 2 })

const mintLocally = (request: TokenRequest, secrets: Secrets, issuer: string) =>
  Effect.gen(function* () {
    const secretName = Object.hasOwn(embedKeys, request.service) ? embedKeys[request.service] : undefined
    if (secretName === undefined) {
      return usageError(
        `The hub does not know ${request.service}; locally, --service must be one of: ${Object.keys(embedKeys).join(", ")}.`
      )
    }
    const key = secrets[secretName]
    if (key === undefined) return { stderr: `${secretName} is not set.\n`, exitCode: 1 }
    const token = yield* mint({
      key: Redacted.value(key),
      issuer,
      audience: request.service,
      subject: request.email,
      companyId: request.company,
      orgRole: request.role,
      nowSeconds: Math.floor(Date.now() / 1000)
    })
    return { stdout: `${token}\n`, exitCode: 0 }
  })

const program = Effect.gen(function* () {
  const { hub: hubOption, command } = parseCommand(process.argv.slice(2))
  if (command._tag === "UsageError") return usageError(command.message)
  const config = yield* ServerConfig
  const { secrets } = yield* resolveSecrets({
    production: config.environment === "production",
    dataDir: config.dataDir,
    fromEnvironment: presentSecrets(config)
  })
  const hub = hubOption ?? `http://127.0.0.1:${config.hubPort}`
  const adminKey = secrets.HUB_ADMIN_KEY === undefined ? "" : Redacted.value(secrets.HUB_ADMIN_KEY)
  if (command._tag === "Token") {
    const viaHub = command.local || adminKey === "" ? undefined : yield* tokenFromHub(hub, adminKey, command)
    return viaHub ?? (yield* mintLocally(command, secrets, config.platformIssuer))
  }
  if (adminKey === "") return { stderr: "HUB_ADMIN_KEY is not set.\n", exitCode: 1 }
  return outcomeOf(hub, yield* callHub(hub, adminKey, command), command.print)
})

Effect.runPromise(program).then(
  (outcome) => {
    if (outcome.stdout !== undefined) process.stdout.write(outcome.stdout)
    if (outcome.stderr !== undefined) process.stderr.write(outcome.stderr)
    process.exitCode = outcome.exitCode
  },
  (error) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  }
)
