import { Effect, Redacted } from "effect"
import { generateKeyPairSync, randomBytes } from "node:crypto"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { SecretNames, type SecretName, type Secrets } from "./Config.ts"

export interface ResolvedSecrets {
  readonly secrets: Secrets
  /** Secrets generated now in development (and kept in the data directory), to name at start. */
  readonly generated: ReadonlyArray<SecretName>
  /** Secrets read from the data directory in development, where an earlier start kept them. */
  readonly read: ReadonlyArray<SecretName>
  /** Secrets left unset in production: the routes that need them fail closed. */
  readonly missing: ReadonlyArray<SecretName>
}

const fileName = "dev-secrets.json"

/** 32 random bytes; the web push key is a P-256 private key (its `d`), from which the public half follows. */
export const generateSecret = (name: SecretName): string =>
  name === "HUB_VAPID_PRIVATE_KEY"
    ? generateKeyPairSync("ec", { namedCurve: "prime256v1" }).privateKey.export({ format: "jwk" }).d!
    : randomBytes(32).toString("base64url")

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
      return { secrets: options.fromEnvironment, generated: [], read: [], missing: options.production ? absent : [] }
    }
    const path = join(options.dataDir, fileName)
    const kept = yield* Effect.promise(() =>
      readFile(path, "utf8").then(
        (text) => JSON.parse(text) as Partial<Record<SecretName, string>>,
        () => ({}) as Partial<Record<SecretName, string>>
      )
    )
    const read = absent.filter((name) => typeof kept[name] === "string")
    const generated = absent.filter((name) => typeof kept[name] !== "string")
    const next: Partial<Record<SecretName, string>> = { ...kept }
    for (const name of generated) next[name] = generateSecret(name)
    if (generated.length > 0) {
      yield* Effect.promise(async () => {
        await mkdir(options.dataDir, { recursive: true, mode: 0o700 })
        await writeFile(path, JSON.stringify(next, null, 2) + "\n", { mode: 0o600 })
      })
    }
    const secrets = { ...options.fromEnvironment }
    for (const name of absent) secrets[name] = Redacted.make(next[name]!)
    return { secrets, generated, read, missing: [] }
  })

const signingKeyFile = "dev-oidc-signing-key.pem"

/**
 * The private key that signs the ID tokens of the hub's OpenID provider: HUB_OIDC_SIGNING_KEY when set.
 * Outside production, without it, an EC P-256 key is generated once and kept in
 * `<dataDir>/dev-oidc-signing-key.pem` (mode 0600). In production it stays unset and the provider is off.
 */
export const resolveOidcSigningKey = (options: {
  readonly production: boolean
  readonly dataDir: string
  readonly fromEnvironment: Redacted.Redacted<string> | undefined
}): Effect.Effect<Redacted.Redacted<string> | undefined> =>
  options.fromEnvironment !== undefined || options.production
    ? Effect.succeed(options.fromEnvironment)
    : Effect.promise(async () => {
        const path = join(options.dataDir, signingKeyFile)
        const kept = await readFile(path, "utf8").catch(() => undefined)
        if (kept !== undefined) return Redacted.make(kept)
        const pem = generateSigningKey()
        await mkdir(options.dataDir, { recursive: true })
        await writeFile(path, pem, { mode: 0o600 })
        return Redacted.make(pem)
      })

/** A fresh EC P-256 private key, PEM (PKCS #8). */
export const generateSigningKey = (): string =>
  generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "pem", type: "pkcs8" }).toString()

/**
 * A fresh set of production secrets as an environment file: every secret setting the server reads
 * (`SecretNames`) and the hub's OpenID signing key, each made with the system's cryptographic random source.
 * One line per setting, so the text works as a Docker or systemd environment file and with dotenv: the PEM key's
 * line breaks are written `\n`, which the server reads back as line breaks.
 */
export const productionSecretsFile = (): string =>
  [
    "# Production secrets (npm run cli -- secrets generate). Keep them in your secret store, never in the",
    "# repository: they are printed this once. Settings that come from elsewhere are not made here: DATABASE_URL,",
    "# SMTP_URL, REDIS_URL, HUB_OIDC_CLIENT_SECRET (from your identity provider), TASKS_MACHINE_KEYS, HUB_CONTEXT_KEYS.",
    ...SecretNames.map((name) => `${name}=${generateSecret(name)}`),
    `HUB_OIDC_SIGNING_KEY=${generateSigningKey().trim().replace(/\n/g, "\\n")}`,
    ""
  ].join("\n")
