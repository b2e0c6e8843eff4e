import { Effect, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { SecretNames, type SecretName, type Secrets } from "./Config.ts"

export interface ResolvedSecrets {
  readonly secrets: Secrets
  /** Secrets generated or loaded from the data directory in development, to print once at start. */
  readonly generated: ReadonlyArray<SecretName>
  /** Secrets left unset in production: the routes that need them fail closed. */
  readonly missing: ReadonlyArray<SecretName>
}

const fileName = "dev-secrets.json"

/**
 * Outside production a missing secret is generated once and kept in `<dataDir>/dev-secrets.json` (mode 0600),
 * so the first command works out of the box and restarts keep the same keys. In production nothing is
 * generated: a missing secret stays missing and every check that needs it fails closed.
 */
export const resolveSecrets = (options: {
  readonly production: boolean
  readonly dataDir: string
  readonly fromEnvironment: Secrets
}): Effect.Effect<ResolvedSecrets> =>
  Effect.gen(function* () {
    const absent = SecretNames.filter((name) => options.fromEnvironment[name] === undefined)
    if (options.production || absent.length === 0) {
      return { secrets: options.fromEnvironment, generated: [], missing: options.production ? absent : [] }
    }
    const path = join(options.dataDir, fileName)
    const kept = yield* Effect.promise(() =>
      readFile(path, "utf8").then(
        (text) => JSON.parse(text) as Partial<Record<SecretName, string>>,
        () => ({}) as Partial<Record<SecretName, string>>
      )
    )
    const next: Partial<Record<SecretName, string>> = { ...kept }
    for (const name of absent) next[name] ??= randomBytes(32).toString("base64url")
    yield* Effect.promise(async () => {
      await mkdir(options.dataDir, { recursive: true })
      await writeFile(path, JSON.stringify(next, null, 2) + "\n", { mode: 0o600 })
    })
    const secrets = { ...options.fromEnvironment }
    for (const name of absent) secrets[name] = Redacted.make(next[name]!)
    return { secrets, generated: absent, missing: [] }
  })
