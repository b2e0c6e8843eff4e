import { Effect, Layer } from "effect"
import { ServiceProbe } from "../../core/hub/ServiceProbe.ts"
import { ServiceCalls } from "../../core/hub/Workspace.ts"
import { ServiceProbeHttp, type ServiceProbeHttpConfig } from "./ServiceProbeHttp.ts"

/**
 * The hub's calls to a service on a person's behalf (workspace pages and actions), over the same guarded
 * node:http(s) client as the conformance probe: no redirects followed, private addresses refused (loopback
 * only outside production or for a first-party service), bounded in time and size. A page is larger than a
 * probe's answer, so the size allowed defaults to 1 MiB and the time to 10 seconds.
 */
export const ServiceCallsHttp = (config: ServiceProbeHttpConfig) =>
  Layer.effect(
    ServiceCalls,
    Effect.gen(function* () {
      const probe = yield* ServiceProbe
      return ServiceCalls.of({ send: probe.send })
    })
  ).pipe(
    Layer.provide(
      ServiceProbeHttp({
        ...config,
        timeoutMs: config.timeoutMs ?? 10_000,
        maxBodyBytes: config.maxBodyBytes ?? 1024 * 1024
      })
    )
  )
