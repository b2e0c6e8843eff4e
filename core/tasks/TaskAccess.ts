import { Cache, Clock, Context, Duration, Effect, Exit, Layer } from "effect"
import { hashSecret, issueSecret, secretHasPrefix, verifySecret } from "../auth/IssuedSecret.ts"
import { OrganizationStatuses } from "../events/OrganizationStatuses.ts"
import { NotFound, type UpstreamError } from "../kernel/Errors.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import { TaskApiKeyStore, type TaskApiKey } from "./ApiKeyStore.ts"
import type { InvalidFields } from "./Errors.ts"
import type { MachineKey } from "./MachineKeys.ts"
import { RecordStore } from "./RecordStore.ts"
import { SessionStore } from "./SessionStore.ts"
import { takeInput } from "./InputDecoding.ts"
import { ApiKeyCreateBody } from "./SettingsInput.ts"
import { isoNow, makeCollaborators, toPerson, type TaskUser } from "./TaskRecords.ts"

/** User API keys are `tsk_` and 43 characters of randomness. */
export const apiKeyPrefix = "tsk_"

/** Web session cookies are `tss_` and 43 characters of randomness; a session lasts 14 days. */
const sessionPrefix = "tss_"
export const sessionLifetimeMillis = 14 * 24 * 60 * 60 * 1000

/**
 * How long one server instance trusts a caller's collaborator record (who a key or a session acts for) before
 * reading it from the record store again: authenticating a request need not read the upstream every time.
 * What may be stale is only the person's name and address (a change upstream shows within this time); the
 * credential itself is checked on every request, so a revoked key or an ended session is refused at once.
 */
export const callerRecordTtl = Duration.seconds(30)

export interface TaskAccessConfig {
  /** Operators' machine keys; each acts for the collaborator with its email (created on first use). */
  readonly machineKeys: ReadonlyArray<MachineKey>
}

/** A new session: the cookie value goes to the browser once; only its hash is kept. */
export interface StartedTaskSession {
  readonly cookie: string
  readonly user: TaskUser
  readonly expiresAt: string
}

/** A new API key: the key itself is shown once; only its hash is kept. */
export interface CreatedTaskApiKey {
  readonly apiKey: TaskApiKey
  readonly key: string
}

/**
 * Who is calling the task inbox: operators' machine keys, users' API keys and web sessions. A credential
 * that is unknown, revoked or expired answers undefined: the caller is refused. So does the credential of a
 * person whose organizations are all suspended (the hub's `organization.status.changed` fact), until one of
 * them is active again.
 */
export class TaskAccess extends Context.Service<
  TaskAccess,
  {
    /** A presented X-API-Key: an operator machine key or a user key; undefined when neither. */
    readonly authenticateKey: (presented: string) => Effect.Effect<TaskUser | undefined, UpstreamError>
    /** A session cookie's value: the signed-in collaborator, or undefined. */
    readonly authenticateSession: (cookie: string) => Effect.Effect<TaskUser | undefined, UpstreamError>
    /**
     * Signing in (the hub vouched for this email): the collaborator with the email, created on first sign-in,
     * and a new session.
     */
    readonly startSession: (email: string, name: string) => Effect.Effect<StartedTaskSession, UpstreamError>
    readonly endSession: (cookie: string) => Effect.Effect<void>
    readonly createApiKey: (user: TaskUser, name: string) => Effect.Effect<CreatedTaskApiKey, InvalidFields>
    readonly listApiKeys: (user: TaskUser) => Effect.Effect<ReadonlyArray<TaskApiKey>>
    readonly revokeApiKey: (user: TaskUser, id: string) => Effect.Effect<void, NotFound>
  }
>()("core/tasks/TaskAccess") {
  static readonly layer = (
    config: TaskAccessConfig
  ): Layer.Layer<
    TaskAccess,
    never,
    RecordStore | TaskApiKeyStore | SessionStore | OrganizationStatuses | IdGenerator
  > =>
    Layer.effect(
      TaskAccess,
      Effect.suspend(() => make(config))
    )
}

const keyInput = takeInput(ApiKeyCreateBody)

const make = (config: TaskAccessConfig) =>
  Effect.gen(function* () {
    const store = yield* RecordStore
    const keys = yield* TaskApiKeyStore
    const sessions = yield* SessionStore
    const ids = yield* IdGenerator
    const statuses = yield* OrganizationStatuses
    const records = yield* makeCollaborators
    // The person a credential acts for, unless their organizations are all suspended.
    const unlessSuspended = (user: TaskUser | undefined) =>
      user === undefined
        ? Effect.succeed(undefined)
        : Effect.map(statuses.personSuspended(user.email), (suspended) => (suspended ? undefined : user))
    const machineKeyHashes = config.machineKeys.map((k) => ({ ...k, hash: hashSecret(k.key) }))
    // Only a found record is kept: a miss or an upstream failure is asked again on the next request.
    const kept = (exit: Exit.Exit<TaskUser | undefined, unknown>) =>
      Exit.isSuccess(exit) && exit.value !== undefined ? callerRecordTtl : Duration.zero
    const byId = yield* Cache.makeWith(
      (userId: string) =>
        Effect.map(store.get("collaborators", userId), (record) =>
          record === undefined ? undefined : toPerson(record)
        ),
      { capacity: 10_000, timeToLive: kept }
    )
    // Keyed by address and name: the name is the one a first sign-in creates the collaborator with.
    const byEmail = yield* Cache.makeWith(
      (who: string) => {
        const [email, name] = JSON.parse(who) as [string, string]
        return records.ensureCollaborator(email, name)
      },
      { capacity: 10_000, timeToLive: kept }
    )
    const ensureCaller = (email: string, name: string) => Cache.get(byEmail, JSON.stringify([email, name]))

    return TaskAccess.of({
      authenticateKey: Effect.fn("Tasks.authenticateKey")(function* (presented: string) {
        if (presented.length === 0) return undefined
        const machine = machineKeyHashes.find((k) => verifySecret(presented, k.hash))
        if (machine !== undefined) return yield* unlessSuspended(yield* ensureCaller(machine.email, machine.name))
        if (!secretHasPrefix(presented, apiKeyPrefix)) return undefined
        const key = yield* keys.findActive(hashSecret(presented))
        if (key === undefined) return undefined
        const user = yield* unlessSuspended(yield* Cache.get(byId, key.userId))
        if (user === undefined) return undefined
        yield* keys.touch(key.id, yield* isoNow)
        return user
      }),

      authenticateSession: Effect.fn("Tasks.authenticateSession")(function* (cookie: string) {
        if (cookie.length === 0) return undefined
        const session = yield* sessions.find(hashSecret(cookie), yield* isoNow)
        if (session === undefined) return undefined
        return yield* unlessSuspended(yield* ensureCaller(session.email, session.name))
      }),

      startSession: Effect.fn("Tasks.startSession")(function* (email: string, name: string) {
        const user = yield* records.ensureCollaborator(email, name)
        const secret = issueSecret(sessionPrefix)
        const expiresAt = new Date((yield* Clock.currentTimeMillis) + sessionLifetimeMillis).toISOString()
        yield* sessions.create({ hash: secret.hash, email: user.email, name: user.name, expiresAt })
        return { cookie: secret.plaintext, user, expiresAt }
      }),

      endSession: Effect.fn("Tasks.endSession")(function* (cookie: string) {
        if (cookie.length > 0) yield* sessions.remove(hashSecret(cookie))
      }),

      createApiKey: Effect.fn("Tasks.createApiKey")(function* (user: TaskUser, name: string) {
        const trimmed = (yield* keyInput({ name })).name
        const secret = issueSecret(apiKeyPrefix)
        const apiKey: TaskApiKey = {
          id: yield* ids.next,
          name: trimmed,
          keyPrefix: secret.displayPrefix,
          createdAt: yield* isoNow,
          lastUsedAt: null
        }
        yield* keys.create({ ...apiKey, userId: user.id, hash: secret.hash, revokedAt: null })
        return { apiKey, key: secret.plaintext }
      }),

      listApiKeys: (user: TaskUser) => keys.list(user.id),

      revokeApiKey: Effect.fn("Tasks.revokeApiKey")(function* (user: TaskUser, id: string) {
        const revoked = yield* keys.revoke(user.id, id, yield* isoNow)
        if (!revoked) return yield* new NotFound({ message: "API key not found" })
      })
    })
  })
