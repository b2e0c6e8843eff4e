import { Effect, Layer } from "effect"
import type { ErrorRenderer } from "../../../adapters/http/ErrorResponse.ts"
import { IdempotencyLayers } from "../../../adapters/http/IdempotencyLayers.ts"
import { serviceRoutes } from "../../../adapters/http/ServiceHttp.ts"
import { TasksApi } from "../../../adapters/http/tasks/Api.ts"
import { TasksApiAuthLayer, TasksSessionAuthLayer } from "../../../adapters/http/tasks/AuthLayers.ts"
import { TasksHandlers, TasksUniformHandlers } from "../../../adapters/http/tasks/Handlers.ts"
import { TasksSignInHandlers, type TasksWebSignIn } from "../../../adapters/http/tasks/SignIn.ts"
import { tasksError, tasksRenderer } from "../../../adapters/http/tasks/TasksErrors.ts"
import { TasksServiceKeyLayer } from "../../../adapters/http/uniform/ServiceKeyLayer.ts"
import { consumedFacts, FactIntake } from "../../../core/events/FactIntake.ts"
import type { Manifest } from "../../../core/kernel/index.ts"
import { RecordStore } from "../../../core/tasks/RecordStore.ts"
import { kib, reveal, version, webApp, type ServiceSettings } from "../Services.ts"

/** The task inbox's client id at the hub's OpenID provider. */
export const tasksOidcClientId = "tasks"

export const tasksManifest: Manifest = {
  service: "tasks",
  displayName: "Task inbox",
  tagline: "Tasks, triage and AI-suggested proposals over your record store",
  contractVersion: "v1",
  requiredTier: "free",
  workspaceRoute: "/tasks",
  capabilities: { notifications: true, deepLinks: true, embed: null },
  emittedEvents: ["tasks.notification.created"],
  consumesFacts: consumedFacts
}

/**
 * Requires the task inbox use cases (`Tasks`), its RecordStore, IdempotencyStore, Transactions and Readiness.
 * Errors in the task inbox's own `{error}` shape. `web`: how people sign in on the web (through the hub).
 */
export const tasksRoutes = (settings: ServiceSettings, web: TasksWebSignIn) =>
  serviceRoutes({
    api: TasksApi,
    handlers: Layer.mergeAll(
      TasksUniformHandlers({ manifest: tasksManifest, version: version("tasks", settings.build) }).pipe(
        Layer.provide(FactIntake.layer({ signingKey: reveal(settings.tasksSigningKey) }))
      ),
      TasksHandlers,
      TasksSignInHandlers(web)
    ),
    errors: { dialect: "hub", maxBodyBytes: 64 * kib, render: tasksRenderer }
  }).pipe(
    Layer.provide(
      Layer.mergeAll(
        TasksServiceKeyLayer({ key: settings.tasksApiKey, production: settings.production }),
        TasksApiAuthLayer({ publicUrl: web.publicUrl }),
        TasksSessionAuthLayer,
        // A task's or a proposal's create writes only its record: it may share its transaction when the record
        // store's writes are part of the unit (RecordStoreSql), never over a store outside the database.
        Layer.unwrap(
          Effect.map(RecordStore, (records) =>
            IdempotencyLayers({
              dialect: "hub",
              secretsKey: reveal(settings.tasksSecretsKey),
              render: tasksIdempotencyRender,
              sharedCreates: records.inUnits
            })
          )
        )
      )
    ),
    // The task inbox's own web app, at `/`; it links back to the hub's workspace (and its settings).
    Layer.merge(webApp(settings, "tasks", { "hitl-workspace-url": `${web.hubIssuer.replace(/\/+$/, "")}/` }))
  )

/** The task inbox answers a reused Idempotency-Key as its other conflicts: 409 with `{error}`. */
const tasksIdempotencyRender: ErrorRenderer = (request, failure) =>
  failure.code === "CONFLICT" ? tasksError(409, failure.message ?? "Conflict") : tasksRenderer(request, failure)
