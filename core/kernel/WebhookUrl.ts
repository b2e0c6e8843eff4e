import { Result } from "effect"
import { isIPv4, isIPv6 } from "node:net"
import { isPrivateAddress } from "./Addresses.ts"

const loopbackHost = (host: string) =>
  host === "localhost" || host.endsWith(".localhost") || (isIPv4(host) && host.startsWith("127.")) || host === "::1"

/**
 * An address the platform posts to on someone's say-so (decisions' webhooks, the hub's chat channel, push
 * endpoints) is https, and never an address on a private or loopback network; outside
 * production, http to loopback is allowed for local development and tests. Host names are checked as
 * written; the delivery worker must check the addresses they resolve to as well (DNS can point anywhere).
 */
export const checkWebhookUrl = (
  input: string,
  options: { readonly allowLoopbackHttp: boolean }
): Result.Result<string, string> => {
  let url: URL
  try {
    url = new URL(input)
  } catch {
    return Result.fail("must be an absolute URL")
  }
  if (url.username !== "" || url.password !== "") return Result.fail("must not carry credentials")
  // A name written with the root's trailing dot (`localhost.`) is the same name: checked without it.
  const host = url.hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.+$/, "")
    .toLowerCase()
  const loopback = loopbackHost(host)
  if (options.allowLoopbackHttp && loopback && (url.protocol === "http:" || url.protocol === "https:")) {
    return Result.succeed(url.toString())
  }
  if (url.protocol !== "https:") return Result.fail("must be an https URL")
  if (loopback || host.endsWith(".local") || host.endsWith(".internal")) {
    return Result.fail("must not point at a loopback or private network")
  }
  if ((isIPv4(host) || isIPv6(host)) && isPrivateAddress(host)) {
    return Result.fail("must not point at a loopback or private network")
  }
  return Result.succeed(url.toString())
}
