import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { HttpClient, HttpClientError } from "effect/http"
import { isIP } from "node:net"
import { isLoopbackAddress, isPrivateAddress } from "../../core/kernel/Addresses.ts"
import { guardedLookup } from "./WebhookSenderHttp.ts"

/**
 * Effect's HTTP client for the hub's calls to registered services (the same rule as the workspace's calls
 * and the conformance probe): a host that resolves to a private address is refused at connect time (the
 * connection uses the address checked), an address written in the URL is checked before the request, and
 * loopback is allowed only when `allowLoopback` (outside production). Redirects are not followed.
 */
export const GuardedHttpClient = (options: { readonly allowLoopback: boolean }): Layer.Layer<HttpClient.HttpClient> => {
  const allowed = (ip: string) => !isPrivateAddress(ip) || (options.allowLoopback && isLoopbackAddress(ip))
  return Layer.effect(
    HttpClient.HttpClient,
    Effect.gen(function* () {
      const client = yield* HttpClient.HttpClient
      return client.pipe(
        HttpClient.mapRequestEffect((request) => {
          const host = new URL(request.url).hostname.replace(/^\[|\]$/g, "")
          return isIP(host) !== 0 && !allowed(host)
            ? Effect.fail(
                new HttpClientError.HttpClientError({
                  reason: new HttpClientError.TransportError({ request, description: "blocked address" })
                })
              )
            : Effect.succeed(request)
        })
      )
    })
  ).pipe(
    Layer.provide(NodeHttpClient.layerNodeHttpNoAgent),
    Layer.provide(NodeHttpClient.layerAgentOptions({ lookup: guardedLookup(allowed) }))
  )
}
