import { Effect, Redacted } from "effect"
import { parseArgs } from "node:util"
import { mint } from "../../core/auth/IdentityToken.ts"
import { presentSecrets, ServerConfig, type SecretName } from "./Config.ts"
import { resolveSecrets } from "./DevSecrets.ts"

const usage = `Usage: npm run cli -- <command> [options]

Commands:
  token --service decisions --email <email> [--company <orgId>] [--role OWNER|ADMIN|MEMBER|VIEWER]
        Mints an identity token (AUTH-4) for a service, signed with its embed key, valid 300 s.
        Uses the same configuration as the server (environment, or DATA_DIR/dev-secrets.json in development).
`

const embedKeys: Record<string, SecretName> = { decisions: "DECISIONS_EMBED_KEY" }

const fail = (message: string) =>
  Effect.sync(() => {
    process.stderr.write(`${message}\n\n${usage}`)
    process.exitCode = 2
  })

const program = Effect.gen(function* () {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      service: { type: "string" },
      email: { type: "string" },
      company: { type: "string" },
      role: { type: "string" }
    }
  })
  if (positionals[0] !== "token")
    return yield* fail(positionals[0] === undefined ? "Name a command." : `Unknown command ${positionals[0]}.`)
  const service = values.service ?? ""
  const secretName = Object.hasOwn(embedKeys, service) ? embedKeys[service] : undefined
  if (secretName === undefined) return yield* fail(`--service must be one of: ${Object.keys(embedKeys).join(", ")}.`)
  if (values.email === undefined) return yield* fail("--email is required.")
  const config = yield* ServerConfig
  const { secrets } = yield* resolveSecrets({
    production: config.environment === "production",
    dataDir: config.dataDir,
    fromEnvironment: presentSecrets(config)
  })
  const key = secrets[secretName]
  if (key === undefined) return yield* fail(`${secretName} is not set.`)
  const token = yield* mint({
    key: Redacted.value(key),
    issuer: config.platformIssuer,
    audience: service,
    subject: values.email,
    companyId: values.company,
    orgRole: values.role,
    nowSeconds: Math.floor(Date.now() / 1000)
  })
  yield* Effect.sync(() => process.stdout.write(`${token}\n`))
})

Effect.runPromise(program).catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 1
})
