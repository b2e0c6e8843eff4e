import { Console, Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { CliError, Command, Flag } from "effect/cli"
import { mint } from "../../core/auth/IdentityToken.ts"
import {
  type ApiCall,
  callHub,
  checkHub,
  outcomeOf,
  type Outcome,
  tokenFromHub,
  type TokenRequest
} from "./CliCommands.ts"
import { presentSecrets, ServerConfig, type SecretName, type Secrets } from "./Config.ts"
import { productionSecretsFile, resolveSecrets } from "./DevSecrets.ts"

/**
 * The operator CLI (`npm run cli -- <command>`), on effect's command-line module: every command and
 * subcommand answers `--help`, flags are checked before anything is sent, and every command but a local
 * `token` and `secrets generate` is one call of the hub's operator API (`/api/v1/admin/*`) with HUB_ADMIN_KEY. Configuration is the
 * server's: the environment, or DATA_DIR/dev-secrets.json in development.
 */

/** A command that did not succeed: its message is what the operator reads; the process exits non-zero. */
export class CliFailure extends Schema.TaggedError<CliFailure>()("CliFailure", { text: Schema.String }) {
  override get [CliError.userMessage]() {
    return this.text
  }
}

const roles = ["OWNER", "ADMIN", "MEMBER", "VIEWER"] as const
const consentNames = ["companyId", "accessClaims", "embed"] as const

const hubFlag = Flag.String("hub").pipe(
  Flag.withDescription("The hub's base URL: https, or http on this machine (default http://127.0.0.1:<HUB_PORT>)"),
  Flag.optional
)

/** First-party services whose embed key the server's configuration holds: tokens for them can be minted here. */
const embedKeys: Record<string, SecretName> = { decisions: "DECISIONS_EMBED_KEY" }

const settings = Effect.gen(function* () {
  const config = yield* ServerConfig
  const { secrets } = yield* resolveSecrets({
    production: config.environment === "production",
    dataDir: config.dataDir,
    fromEnvironment: presentSecrets(config)
  })
  const adminKey = secrets.HUB_ADMIN_KEY === undefined ? "" : Redacted.value(secrets.HUB_ADMIN_KEY)
  return { config, secrets, adminKey }
}).pipe(Effect.orDie)

const hubOf = (hub: Option.Option<string>, port: number) =>
  Option.match(hub, {
    onNone: () => Effect.succeed(`http://127.0.0.1:${port}`),
    onSome: (url) => {
      const refused = checkHub(url)
      return refused === undefined ? Effect.succeed(url) : Effect.fail(new CliFailure({ text: refused }))
    }
  })

/** Prints an outcome: stdout as it is, stderr as the failure's message (so the exit code is non-zero). */
const finish = (outcome: Outcome) =>
  Effect.gen(function* () {
    if (outcome.stdout !== undefined) yield* Console.log(outcome.stdout.replace(/\n$/, ""))
    if (outcome.exitCode !== 0) {
      return yield* new CliFailure({ text: (outcome.stderr ?? "The command failed.").replace(/\n$/, "") })
    }
  })

/**
 * What the commands do once their flags are parsed: one call of the operator API, or a token. A service, so
 * the argument handling can be tested with a recording stand-in (test/unit/cli-commands.test.ts).
 */
export class Operator extends Context.Service<
  Operator,
  {
    readonly call: (hub: Option.Option<string>, call: ApiCall) => Effect.Effect<void, CliFailure>
    readonly token: (hub: Option.Option<string>, request: TokenRequest) => Effect.Effect<void, CliFailure>
  }
>()("apps/server/Operator") {}

const operatorCall = (hub: Option.Option<string>, call: ApiCall) => Operator.use((operator) => operator.call(hub, call))

const segment = (value: string) => encodeURIComponent(value)
const call = (
  method: ApiCall["method"],
  path: string,
  body?: Record<string, unknown>,
  print: ApiCall["print"] = "data"
): ApiCall => ({
  _tag: "ApiCall",
  method,
  path,
  ...(body === undefined ? {} : { body }),
  print
})
const orgFlag = Flag.String("org").pipe(Flag.withDescription("The organization's id"))
const listOf = (text: string) =>
  text
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part.length > 0)

const orgCreate = Command.make(
  "create",
  {
    hub: hubFlag,
    name: Flag.String("name").pipe(Flag.withDescription("The organization's name")),
    tier: Flag.Literals("tier", ["free", "hourly", "monthly"]).pipe(Flag.withDescription("Its tier"), Flag.optional)
  },
  ({ hub, name, tier }) =>
    operatorCall(
      hub,
      call("POST", "/api/v1/admin/orgs", {
        name,
        ...Option.match(tier, { onNone: () => ({}), onSome: (t) => ({ tier: t }) })
      })
    )
).pipe(Command.withDescription("Create an organization"))

const orgUpdate = Command.make(
  "update",
  {
    hub: hubFlag,
    org: Flag.String("org").pipe(Flag.withDescription("The organization's id")),
    tier: Flag.Literals("tier", ["free", "hourly", "monthly"]).pipe(Flag.withDescription("Its tier"), Flag.optional),
    archived: Flag.Literals("archived", ["true", "false"]).pipe(
      Flag.withDescription("Archive it (its people's keys and sessions are refused by the services) or unarchive it"),
      Flag.optional
    )
  },
  ({ hub, org, tier, archived }) =>
    operatorCall(
      hub,
      call("PATCH", `/api/v1/admin/orgs/${segment(org)}`, {
        ...Option.match(tier, { onNone: () => ({}), onSome: (t) => ({ tier: t }) }),
        ...Option.match(archived, { onNone: () => ({}), onSome: (a) => ({ archived: a === "true" }) })
      })
    )
).pipe(Command.withDescription("Change an organization's tier, or archive or unarchive it"))

const orgList = Command.make("list", { hub: hubFlag }, ({ hub }) =>
  operatorCall(hub, call("GET", "/api/v1/admin/orgs", undefined, { field: "orgs" }))
).pipe(Command.withDescription("List every organization with its status (active, archived, merged, deleted)"))

const orgArchive = Command.make("archive", { hub: hubFlag, org: orgFlag }, ({ hub, org }) =>
  operatorCall(hub, call("PATCH", `/api/v1/admin/orgs/${segment(org)}`, { archived: true }))
).pipe(Command.withDescription("Archive (disable) an organization"))

const orgUnarchive = Command.make("unarchive", { hub: hubFlag, org: orgFlag }, ({ hub, org }) =>
  operatorCall(hub, call("PATCH", `/api/v1/admin/orgs/${segment(org)}`, { archived: false }))
).pipe(Command.withDescription("Unarchive (enable again) an archived organization"))

const userList = Command.make("list", { hub: hubFlag }, ({ hub }) =>
  operatorCall(hub, call("GET", "/api/v1/admin/users", undefined, { field: "users" }))
).pipe(Command.withDescription("List every user of the hub's directory, by email"))

const userCreate = Command.make(
  "create",
  {
    hub: hubFlag,
    email: Flag.String("email").pipe(Flag.withDescription("The person's email address")),
    name: Flag.String("name").pipe(Flag.withDescription("Their display name")),
    verified: Flag.Boolean("verified").pipe(
      Flag.withDescription("Mark the email address as verified"),
      Flag.withDefault(false)
    )
  },
  ({ hub, email, name, verified }) => operatorCall(hub, call("POST", "/api/v1/admin/users", { email, name, verified }))
).pipe(Command.withDescription("Create a user in the hub's directory"))

const memberAdd = Command.make(
  "add",
  {
    hub: hubFlag,
    org: orgFlag,
    email: Flag.String("email").pipe(Flag.withDescription("The user's email address")),
    role: Flag.Literals("role", roles).pipe(Flag.withDescription("Their role in the organization"))
  },
  ({ hub, org, email, role }) =>
    operatorCall(hub, call("POST", `/api/v1/admin/orgs/${segment(org)}/members`, { email, role }))
).pipe(Command.withDescription("Add a user to an organization"))

const memberList = Command.make("list", { hub: hubFlag, org: orgFlag }, ({ hub, org }) =>
  operatorCall(hub, call("GET", `/api/v1/admin/orgs/${segment(org)}`, undefined, { field: "members" }))
).pipe(Command.withDescription("List an organization's members with their roles"))

const memberRemove = Command.make(
  "remove",
  {
    hub: hubFlag,
    org: orgFlag,
    email: Flag.String("email").pipe(Flag.withDescription("The member's email address"))
  },
  ({ hub, org, email }) =>
    operatorCall(hub, call("DELETE", `/api/v1/admin/orgs/${segment(org)}/members/${segment(email)}`))
).pipe(Command.withDescription("Remove a user from an organization (the user stays in the directory)"))

const serviceId = Flag.String("id").pipe(
  Flag.withDescription("The service id (lowercase letters and digits, words joined by -)")
)

const serviceRegister = Command.make(
  "register",
  {
    hub: hubFlag,
    id: serviceId,
    name: Flag.String("name").pipe(Flag.withDescription("The display name")),
    url: Flag.String("url").pipe(Flag.withDescription("The service's https base URL"))
  },
  ({ hub, id, name, url }) =>
    operatorCall(hub, call("POST", "/api/v1/admin/services", { id, displayName: name, baseUrl: url }))
).pipe(Command.withDescription("Register a service; prints its credentials once"))

const serviceList = Command.make("list", { hub: hubFlag }, ({ hub }) =>
  operatorCall(hub, call("GET", "/api/v1/admin/services"))
).pipe(Command.withDescription("List the registered services"))

const servicePromote = Command.make("promote", { hub: hubFlag, id: serviceId }, ({ hub, id }) =>
  operatorCall(hub, call("POST", `/api/v1/admin/services/${segment(id)}/promote`))
).pipe(Command.withDescription("Promote a service to its next lifecycle state"))

const serviceSuspend = Command.make("suspend", { hub: hubFlag, id: serviceId }, ({ hub, id }) =>
  operatorCall(hub, call("POST", `/api/v1/admin/services/${segment(id)}/suspend`))
).pipe(Command.withDescription("Suspend (disable) a service: its credentials stop working until it is promoted"))

const installAdd = Command.make(
  "add",
  {
    hub: hubFlag,
    org: orgFlag,
    service: Flag.String("service").pipe(Flag.withDescription("The service id")),
    consents: Flag.String("consents").pipe(
      Flag.withDescription(`Consents granted, comma-separated: ${consentNames.join(", ")} (default: all)`),
      Flag.optional
    ),
    permissions: Flag.String("permissions").pipe(
      Flag.withDescription("Permission keys, comma-separated"),
      Flag.optional
    )
  },
  ({ hub, org, service, consents, permissions }) =>
    Effect.gen(function* () {
      const granted = Option.match(consents, { onNone: () => [...consentNames] as Array<string>, onSome: listOf })
      const unknown = granted.find((name) => !(consentNames as ReadonlyArray<string>).includes(name))
      if (unknown !== undefined) {
        return yield* new CliFailure({ text: `--consents takes ${consentNames.join(", ")}; not ${unknown}.` })
      }
      yield* operatorCall(
        hub,
        call("PUT", `/api/v1/admin/orgs/${segment(org)}/installations/${segment(service)}`, {
          consents: Object.fromEntries(consentNames.map((name) => [name, granted.includes(name)])),
          permissions: Option.match(permissions, { onNone: () => [], onSome: listOf })
        })
      )
    })
).pipe(Command.withDescription("Install a service for an organization, or consent again to an installed one"))

const installList = Command.make("list", { hub: hubFlag, org: orgFlag }, ({ hub, org }) =>
  operatorCall(hub, call("GET", `/api/v1/admin/orgs/${segment(org)}`, undefined, { field: "installations" }))
).pipe(Command.withDescription("List an organization's installations, active or not"))

const installRemove = Command.make(
  "remove",
  { hub: hubFlag, org: orgFlag, service: Flag.String("service").pipe(Flag.withDescription("The service id")) },
  ({ hub, org, service }) =>
    operatorCall(hub, call("DELETE", `/api/v1/admin/orgs/${segment(org)}/installations/${segment(service)}`))
).pipe(Command.withDescription("Uninstall a service from an organization (earlier identity tokens stop working)"))

const secretsGenerate = Command.make("generate", {}, () =>
  Console.log(productionSecretsFile().replace(/\n$/, ""))
).pipe(
  Command.withDescription(
    "Print a fresh set of production secrets as an environment file (written nowhere: redirect it where you keep secrets)"
  )
)

const flagSet = Command.make(
  "set",
  {
    hub: hubFlag,
    name: Flag.Literals("name", ["access-claims", "developer-platform"]).pipe(Flag.withDescription("The flag")),
    enabled: Flag.Literals("enabled", ["true", "false"]).pipe(Flag.withDescription("Its value")),
    org: Flag.String("org").pipe(Flag.withDescription("Only for this organization"), Flag.optional)
  },
  ({ hub, name, enabled, org }) =>
    operatorCall(
      hub,
      call("PUT", `/api/v1/admin/flags/${segment(name)}`, {
        enabled: enabled === "true",
        ...Option.match(org, { onNone: () => ({}), onSome: (orgId) => ({ orgId }) })
      })
    )
).pipe(Command.withDescription("Set a feature flag, for every organization or one"))

const mintLocally = (request: TokenRequest, secrets: Secrets, issuer: string) =>
  Effect.gen(function* () {
    const secretName = Object.hasOwn(embedKeys, request.service) ? embedKeys[request.service] : undefined
    if (secretName === undefined) {
      return yield* new CliFailure({
        text: `The hub does not know ${request.service}; locally, --service must be one of: ${Object.keys(embedKeys).join(", ")}.`
      })
    }
    const key = secrets[secretName]
    if (key === undefined) return yield* new CliFailure({ text: `${secretName} is not set.` })
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

const token = Command.make(
  "token",
  {
    hub: hubFlag,
    service: Flag.String("service").pipe(Flag.withDescription("The audience: the service the token is for")),
    email: Flag.String("email").pipe(Flag.withDescription("The subject's email address")),
    company: Flag.String("company").pipe(Flag.withDescription("The organization id (companyId claim)"), Flag.optional),
    role: Flag.Literals("role", roles).pipe(Flag.withDescription("The role claim (minted locally)"), Flag.optional),
    local: Flag.Boolean("local").pipe(
      Flag.withDescription("Mint here with the service's embed key"),
      Flag.withDefault(false)
    )
  },
  (input) =>
    Operator.use((operator) =>
      operator.token(input.hub, {
        _tag: "Token",
        service: input.service,
        email: input.email,
        company: Option.getOrUndefined(input.company),
        role: Option.getOrUndefined(input.role),
        local: input.local || Option.isSome(input.role)
      })
    )
).pipe(
  Command.withDescription(
    "Print an identity token valid 300 s. Minted by the hub when it knows the service; with --role or --local, or when the hub does not know the service or cannot be reached, minted here with the service's embed key (first-party services only)."
  )
)

const group = (
  name: string,
  description: string,
  subcommands: ReadonlyArray<Command.Command<any, any, any, any, any>>
) => Command.make(name).pipe(Command.withDescription(description), Command.withSubcommands(subcommands as never))

export const cli = Command.make("cli").pipe(
  Command.withDescription(
    "Operate the hub: organizations, users, services, installations, flags and tokens; make production secrets"
  ),
  Command.withSubcommands([
    group("org", "Organizations", [orgCreate, orgUpdate, orgList, orgArchive, orgUnarchive]),
    group("user", "Users of the hub's directory", [userCreate, userList]),
    group("member", "Memberships", [memberAdd, memberList, memberRemove]),
    group("service", "Registered services", [serviceRegister, serviceList, servicePromote, serviceSuspend]),
    group("install", "Installations of services for organizations", [installAdd, installList, installRemove]),
    group("flag", "Feature flags", [flagSet]),
    token,
    group("secrets", "Secrets for a production server", [secretsGenerate])
  ])
)

/** The operator as the installed CLI runs it: the server's configuration, the hub over HTTP. */
export const OperatorLive = Layer.succeed(Operator, {
  call: (hubOption, call) =>
    Effect.gen(function* () {
      const { config, adminKey } = yield* settings
      const hub = yield* hubOf(hubOption, config.hubPort)
      if (adminKey === "") return yield* new CliFailure({ text: "HUB_ADMIN_KEY is not set." })
      yield* finish(outcomeOf(hub, yield* callHub(hub, adminKey, call), call.print))
    }),
  token: (hubOption, request) =>
    Effect.gen(function* () {
      const { config, secrets, adminKey } = yield* settings
      const hub = yield* hubOf(hubOption, config.hubPort)
      const viaHub = request.local || adminKey === "" ? undefined : yield* tokenFromHub(hub, adminKey, request)
      yield* finish(viaHub ?? (yield* mintLocally(request, secrets, config.platformIssuer)))
    })
})
