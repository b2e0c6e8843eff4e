import { Clock, Context, Effect, Layer, Predicate, Schema } from "effect"
import { FactNames, type FactName } from "../kernel/Facts.ts"
import { mint } from "../auth/IdentityToken.ts"
import { issueSecret } from "../auth/IssuedSecret.ts"
import { isErrorCode, statusOf } from "../kernel/ErrorCode.ts"
import { NotFound, type NotConfigured } from "../kernel/Errors.ts"
import { Hub } from "../kernel/Limits.ts"
import { ContractVersion, Manifest, Tier } from "../kernel/Manifest.ts"
import { isUserSafe } from "../kernel/SafeMessage.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { Registry } from "./Registry.ts"
import { ServiceProbe, type ProbeAnswer, type ProbeFailed, type ProbeRequest } from "./ServiceProbe.ts"
import type { ConformanceCheck, ConformanceReport, RegisteredService } from "./ServiceStore.ts"

/**
 * The hub's conformance check of a registered service: the platform contract's uniform contract,
 * probed over HTTP and judged by pure functions, so the rules are testable without a network.
 */

/** The probes, one request each; their answers are judged by the checks below. */
export const ProbeNames = [
  "health",
  "ready",
  "version",
  "manifest",
  "manifestWithoutKey",
  "manifestWrongKey",
  "wrongAudience"
] as const
export type ProbeName = (typeof ProbeNames)[number]

/** The checks of a report, in the order they are listed. */
export const CheckNames = [...ProbeNames, "errorBodies"] as const
export type CheckName = (typeof CheckNames)[number]

/** A probe's outcome: the service's answer, or no answer at all. */
export type ProbeOutcome = ProbeAnswer | ProbeFailed
export type ProbeAnswers = Readonly<Record<ProbeName, ProbeOutcome>>

/** What the check needs to know of a service: where it lives and how it is called. */
export type ProbeTarget = Pick<RegisteredService, "id" | "baseUrl" | "apiKeyHeader" | "resourcePath" | "firstParty">

/** The platform contract, "Manifest", self-serve shape (the first-party shape is core/kernel/Manifest.ts). */
export const SelfServeManifest = Schema.Struct({
  service: Schema.String,
  displayName: Schema.String,
  contractVersion: ContractVersion,
  tagline: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(Hub.manifestTaglineMax))),
  description: Schema.optionalKey(Schema.String),
  requiredTier: Schema.optionalKey(Tier),
  capabilities: Schema.Struct({
    pages: Schema.optionalKey(Schema.Boolean),
    events: Schema.optionalKey(Schema.Boolean),
    ai: Schema.optionalKey(Schema.Struct({ paths: Schema.optionalKey(Schema.Array(Schema.String)) }))
  }),
  requestedGrants: Schema.optionalKey(
    Schema.Struct({
      identity: Schema.optionalKey(
        Schema.Struct({
          companyId: Schema.optionalKey(Schema.Boolean),
          tier: Schema.optionalKey(Schema.Boolean),
          tools: Schema.optionalKey(Schema.Boolean)
        })
      ),
      facts: Schema.optionalKey(Schema.Array(Schema.String)),
      events: Schema.optionalKey(Schema.Array(Schema.String)),
      embed: Schema.optionalKey(Schema.Boolean),
      byokRelayPaths: Schema.optionalKey(Schema.Array(Schema.String))
    })
  ),
  certification: Schema.Struct({
    resourcePath: Schema.String,
    healthPath: Schema.String,
    recordPathTemplate: Schema.optionalKey(Schema.String.check(Schema.isPattern(/\{id\}/)))
  })
})

const isManifest = Schema.is(Manifest)
const isSelfServeManifest = Schema.is(SelfServeManifest)

/**
 * Product names an answer must not reveal, beyond those core/kernel/SafeMessage.ts already refuses (which
 * matches case-insensitively). These are common words too ("effect", "node"), so only the capitalised
 * product spelling counts, alone or as the head of an identifier (`PrismaClientKnownRequestError`,
 * `MongoServerError`), but not inside a word ("Effective").
 */
const productNames =
  /\b(Node|Effect|Vercel|Express|Fastify|Prisma|Supabase|Redis|Mongo|MongoDB|Mongoose|MySQL|SQLite|Sequelize|TypeORM|Kysely|Heroku|Netlify|AWS|Cloudflare|Deno|Bun|TypeScript|Drizzle|Knex)(?=\b|[A-Z])/

/**
 * What a server's internals say when they fail, without naming themselves: a database's own error text, a
 * runtime's exception names and messages, a source file with its line, `process.env`. Each means the
 * service passed an internal error through instead of a message of its own.
 */
const internals = [
  /\b(violates|violated) (unique|foreign key|not-null|check|exclusion) constraint\b/i,
  /\b(relation|column|table) "[^"]*" does not exist\b/i,
  /\bsyntax error at or near\b/i,
  /\b(TypeError|ReferenceError|SyntaxError|RangeError|EvalError|URIError)\b/,
  /\bcannot read propert(y|ies) of (undefined|null)\b/i,
  /\bis not a function\b/i,
  /\bprocess\.env\b/,
  /\b[\w-]+\.(ts|tsx|js|jsx|mjs|cjs|py|rb|go|java|php):\d+/
]

/**
 * A message is user-safe text. Refuses stack frames, file paths, environment
 * variable names and vendor or product names (the kernel's guard, plus the names above), and the raw text
 * of an internal failure.
 */
export const isSafeMessage = (message: string): boolean =>
  isUserSafe(message) && !productNames.test(message) && !internals.some((pattern) => pattern.test(message))

/** A service-specific code: one word of letters, digits and underscores. */
const serviceCode = /^[A-Za-z][A-Za-z0-9_]{0,63}$/

const parseJson = (answer: ProbeAnswer): unknown => {
  if (answer.truncated) return undefined
  try {
    return JSON.parse(answer.body)
  } catch {
    return undefined
  }
}

const isFailure = (outcome: ProbeOutcome): outcome is ProbeFailed => Predicate.isTagged(outcome, "ProbeFailed")

const noAnswer = (failed: ProbeFailed): string =>
  failed.reason === "timeout"
    ? "no answer in time"
    : failed.reason === "blocked_address"
      ? "the address is not allowed"
      : "the service could not be reached"

/** The error body's message, or why the body is not an acceptable error body. */
type ErrorBodyVerdict = { readonly ok: true } | { readonly ok: false; readonly why: string }

/**
 * An error answer of the platform contract's contract: `{error: {code, message, details?}}`, the code one of the
 * taxonomy (with its status) or a service code, the message user-safe. Outside `/api/v1` a service may
 * keep its own documented `{error: <string>}` shape (the platform contract, "Errors", names such legacy routes;
 * the task inbox contract's task inbox uses it throughout), but its message must be just as safe.
 */
const judgeErrorBody = (answer: ProbeAnswer, options: { readonly envelopeRequired: boolean }): ErrorBodyVerdict => {
  const body = parseJson(answer)
  if (!Predicate.isObject(body) || !Object.hasOwn(body, "error")) {
    return { ok: false, why: "the error body is not the envelope" }
  }
  const error = (body as { readonly error: unknown }).error
  if (typeof error === "string" && !options.envelopeRequired) {
    return isSafeMessage(error) ? { ok: true } : { ok: false, why: "the error message is not user-safe" }
  }
  if (!Predicate.isObject(error)) return { ok: false, why: "the error body is not the envelope" }
  const { code, message } = error as { readonly code?: unknown; readonly message?: unknown }
  if (typeof code !== "string" || typeof message !== "string") {
    return { ok: false, why: "the error body is not the envelope" }
  }
  if (!serviceCode.test(code)) return { ok: false, why: "the error code is not a code" }
  if (isErrorCode(code) && statusOf(code) !== answer.status) {
    return { ok: false, why: "the error code does not match the status" }
  }
  return isSafeMessage(message) ? { ok: true } : { ok: false, why: "the error message is not user-safe" }
}

const passed = (name: CheckName): ConformanceCheck => ({ name, passed: true })
const failed = (name: CheckName, detail: string): ConformanceCheck => ({ name, passed: false, detail })

/** Judges one answer that must succeed: the status, then the `data` of the envelope. */
const expectData = (
  name: CheckName,
  outcome: ProbeOutcome,
  judge: (data: unknown) => string | undefined
): ConformanceCheck => {
  if (isFailure(outcome)) return failed(name, noAnswer(outcome))
  if (outcome.status !== 200) return failed(name, `expected 200, got ${outcome.status}`)
  const body = parseJson(outcome)
  if (!Predicate.isObject(body) || !Object.hasOwn(body, "data")) return failed(name, "the body is not `{data}`")
  const wrong = judge((body as { readonly data: unknown }).data)
  return wrong === undefined ? passed(name) : failed(name, wrong)
}

/** Judges an answer that must be a refusal with `status` and an acceptable error body. */
const expectRefusal = (
  name: CheckName,
  outcome: ProbeOutcome,
  status: number,
  envelopeRequired: boolean
): ConformanceCheck => {
  if (isFailure(outcome)) return failed(name, noAnswer(outcome))
  if (outcome.status !== status) return failed(name, `expected ${status}, got ${outcome.status}`)
  const verdict = judgeErrorBody(outcome, { envelopeRequired })
  return verdict.ok ? passed(name) : failed(name, verdict.why)
}

const isStringOrAbsent = (value: unknown) => value === undefined || typeof value === "string"

/** VersionInfo, every field an optional string, the contract version `v1`. */
const judgeVersion = (data: unknown): string | undefined => {
  if (!Predicate.isObject(data)) return "the version is not an object"
  const { service, contractVersion, build } = data as Record<string, unknown>
  if (!isStringOrAbsent(service) || !isStringOrAbsent(build) || !isStringOrAbsent(contractVersion)) {
    return "the version fields are not strings"
  }
  return contractVersion === undefined || contractVersion === "v1" ? undefined : "the contract version is not v1"
}

const judgeManifest =
  (serviceId: string) =>
  (data: unknown): string | undefined => {
    if (!isManifest(data) && !isSelfServeManifest(data))
      return "the manifest matches neither shape of the platform contract"
    return data.service === serviceId ? undefined : "the manifest names another service"
  }

/**
 * The facts a service's manifest declares: `consumesFacts` of the first-party shape, `requestedGrants.facts`
 * of the self-serve shape; only those the platform sends, each once. None when the manifest was not good.
 */
export const declaredFacts = (serviceId: string, outcome: ProbeOutcome): ReadonlyArray<FactName> => {
  if (isFailure(outcome) || outcome.status !== 200) return []
  const body = parseJson(outcome)
  const data = Predicate.isObject(body) ? (body as { readonly data?: unknown }).data : undefined
  if (judgeManifest(serviceId)(data) !== undefined) return []
  const named = isManifest(data) ? data.consumesFacts : isSelfServeManifest(data) ? data.requestedGrants?.facts : []
  return FactNames.filter((fact) => (named ?? []).includes(fact))
}

/** The platform contract governs `/api/v1`; a resource route outside it follows the service's own documented errors. */
const isUniformPath = (path: string) => path.startsWith("/api/v1/")

/**
 * Every error answer the probes received (status 400 and above) must be an acceptable error body: the
 * envelope on `/api/v1` routes, with a safe message everywhere.
 */
const judgeErrorBodies = (target: ProbeTarget, answers: ProbeAnswers): ConformanceCheck => {
  const wrong: Array<string> = []
  for (const name of ProbeNames) {
    const outcome = answers[name]
    if (isFailure(outcome) || outcome.status < 400) continue
    const envelopeRequired = name !== "wrongAudience" || isUniformPath(target.resourcePath)
    const verdict = judgeErrorBody(outcome, { envelopeRequired })
    if (!verdict.ok) wrong.push(`${name}: ${verdict.why}`)
  }
  return wrong.length === 0 ? passed("errorBodies") : failed("errorBodies", wrong.join("; "))
}

/** The checks of the platform contract's uniform contract over the probes' outcomes. Pure. */
export const evaluate = (target: ProbeTarget, answers: ProbeAnswers): ReadonlyArray<ConformanceCheck> => {
  const ready = answers.ready
  return [
    expectData("health", answers.health, (data) =>
      Predicate.isObject(data) && (data as { readonly status?: unknown }).status === "ok"
        ? undefined
        : "the health status is not ok"
    ),
    // Ready or not ready are both conforming answers; not ready is a 503 envelope.
    !isFailure(ready) && ready.status === 503
      ? expectRefusal("ready", ready, 503, true)
      : expectData("ready", ready, () => undefined),
    expectData("version", answers.version, judgeVersion),
    expectData("manifest", answers.manifest, judgeManifest(target.id)),
    expectRefusal("manifestWithoutKey", answers.manifestWithoutKey, 401, true),
    expectRefusal("manifestWrongKey", answers.manifestWrongKey, 401, true),
    expectRefusal("wrongAudience", answers.wrongAudience, 401, isUniformPath(target.resourcePath)),
    judgeErrorBodies(target, answers)
  ]
}

export const conformanceReport = (checks: ReadonlyArray<ConformanceCheck>, ranAt: string): ConformanceReport => ({
  ranAt,
  passed: checks.length > 0 && checks.every((check) => check.passed),
  checks
})

/** An audience that is not the service's own: the hub's id, or another first-party id for the hub itself. */
export const otherAudience = (serviceId: string): string => (serviceId === "hub" ? "decisions" : "hub")

/** The subject of the probe's identity token; never a real user. */
export const probeSubject = "conformance-check@example.com"

/** The requests of a run. The wrong key and the wrong-audience token are made by the caller. */
export const probeRequests = (
  target: ProbeTarget,
  keys: { readonly apiKey: string; readonly wrongApiKey: string; readonly wrongAudienceToken: string }
): Readonly<Record<ProbeName, ProbeRequest>> => {
  const get = (path: string, headers: Record<string, string> = {}): ProbeRequest => ({
    method: "GET",
    url: `${target.baseUrl}${path}`,
    headers: { accept: "application/json", ...headers },
    operatorConfigured: target.firstParty
  })
  return {
    health: get("/api/v1/health"),
    ready: get("/api/v1/ready"),
    version: get("/api/v1/version"),
    manifest: get("/api/v1/manifest", { [target.apiKeyHeader]: keys.apiKey }),
    manifestWithoutKey: get("/api/v1/manifest"),
    manifestWrongKey: get("/api/v1/manifest", { [target.apiKeyHeader]: keys.wrongApiKey }),
    wrongAudience: get(target.resourcePath, {
      [target.apiKeyHeader]: keys.apiKey,
      "X-Workspace-Token": keys.wrongAudienceToken
    })
  }
}

export interface ConformanceConfig {
  /** `PLATFORM_ISSUER`: the probe's token is right in everything but its audience. */
  readonly issuer: string
}

/** Runs the conformance check of a registered service and keeps its report. */
export class Conformance extends Context.Service<
  Conformance,
  {
    /** Probes the service, stores the report (`Registry.recordConformance`) and answers it. */
    readonly run: (serviceId: string) => Effect.Effect<ConformanceReport, NotFound | NotConfigured>
    /** The latest stored report; NotFound when the service is unknown or was never checked. */
    readonly latest: (serviceId: string) => Effect.Effect<ConformanceReport, NotFound>
  }
>()("core/hub/Conformance") {
  static readonly layer = (config: ConformanceConfig) =>
    Layer.effect(
      Conformance,
      Effect.gen(function* () {
        const registry = yield* Registry
        const probe = yield* ServiceProbe

        const send = (request: ProbeRequest): Effect.Effect<ProbeOutcome> =>
          probe.send(request).pipe(Effect.catchTag("ProbeFailed", (failure) => Effect.succeed(failure)))

        return Conformance.of({
          run: Effect.fn("Conformance.run")(function* (serviceId: string) {
            const found = yield* registry.credentials(serviceId)
            if (found === undefined) return yield* new NotFound({})
            const { service, credentials } = found
            const now = yield* Clock.currentTimeMillis
            const wrongAudienceToken = yield* mint({
              key: credentials.embedKey,
              issuer: config.issuer,
              audience: otherAudience(service.id),
              subject: probeSubject,
              companyId: "conformance",
              nowSeconds: Math.floor(now / 1000)
            })
            const requests = probeRequests(service, {
              apiKey: credentials.apiKey,
              wrongApiKey: issueSecret("hsk_").plaintext,
              wrongAudienceToken
            })
            const answers = yield* Effect.all(
              Object.fromEntries(ProbeNames.map((name) => [name, send(requests[name])])) as Record<
                ProbeName,
                Effect.Effect<ProbeOutcome>
              >,
              { concurrency: 4 }
            )
            const ranAt = isoAt(yield* Clock.currentTimeMillis)
            const report = conformanceReport(evaluate(service, answers), ranAt)
            yield* registry.recordConformance(serviceId, report, declaredFacts(service.id, answers.manifest))
            return report
          }),
          latest: (serviceId) =>
            Effect.flatMap(registry.find(serviceId), (service) =>
              service.conformance === null ? Effect.fail(new NotFound({})) : Effect.succeed(service.conformance)
            )
        })
      })
    )
}
