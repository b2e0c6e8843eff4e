import { useEffect, useState } from "preact/hooks"
import { getData, request } from "../shared/api.ts"
import { ErrorMessage } from "../shared/components.tsx"

/** Where this browser stands: notified, not notified, refused by the person in the browser, or unable to. */
type State = "checking" | "on" | "off" | "blocked" | "unsupported"

const supported = () =>
  typeof navigator !== "undefined" &&
  "serviceWorker" in navigator &&
  typeof window.PushManager === "function" &&
  typeof window.Notification === "function"

/** The hub's VAPID public key is base64url; the browser wants its bytes. */
const keyBytes = (base64url: string) => {
  const base64 = base64url.replace(/-/g, "+").replace(/_/g, "/")
  const binary = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4))
  return Uint8Array.from(binary, (c) => c.charCodeAt(0))
}

const currentSubscription = async () => {
  const registration = await navigator.serviceWorker.getRegistration("/")
  return registration === undefined ? null : registration.pushManager.getSubscription()
}

const stateNow = async (): Promise<State> => {
  if (!supported()) return "unsupported"
  if (Notification.permission === "denied") return "blocked"
  return (await currentSubscription()) !== null ? "on" : "off"
}

const describe: Record<State, string> = {
  checking: "Checking this browser…",
  on: "This browser shows your notifications.",
  off: "This browser does not show your notifications.",
  blocked: "Notifications are blocked for this site in this browser's settings.",
  unsupported: "This browser cannot show notifications from the workspace."
}

/**
 * "Notify this browser": registers the workspace's service worker, subscribes to push with the hub's key and
 * gives the subscription to the hub (turning the browser channel on if it was off); turning it off forgets it
 * at the hub and unsubscribes. `onChannels` hears the channels saved when this turned the browser channel on.
 */
export const BrowserPush = ({ onChannels }: { readonly onChannels: (channels: ReadonlyArray<string>) => void }) => {
  const [state, setState] = useState<State>("checking")
  const [pending, setPending] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  useEffect(() => {
    stateNow().then(setState, () => setState("off"))
  }, [])

  const turnOn = async () => {
    const { publicKey } = await getData<{ publicKey: string }>("/api/v1/me/push-key")
    const registration = await navigator.serviceWorker.register("/sw.js", { scope: "/" })
    await navigator.serviceWorker.ready
    if ((await Notification.requestPermission()) !== "granted") return
    const subscription = await registration.pushManager.subscribe({
      userVisibleOnly: true,
      applicationServerKey: keyBytes(publicKey)
    })
    await request("POST", "/api/v1/me/push-subscriptions", { body: subscription.toJSON() })
    const preferences = await getData<{ channels: ReadonlyArray<string> }>("/api/v1/me/preferences")
    if (!preferences.channels.includes("push")) {
      const channels = [...preferences.channels, "push"]
      await request("PATCH", "/api/v1/me/preferences", { body: { channels } })
      onChannels(channels)
    }
  }

  const turnOff = async () => {
    const subscription = await currentSubscription()
    if (subscription === null) return
    await request("DELETE", "/api/v1/me/push-subscriptions", { body: { endpoint: subscription.endpoint } }).catch(
      // The hub may have forgotten this browser already (its push service said it was gone).
      (failure: unknown) => {
        if (!(typeof failure === "object" && failure !== null && "status" in failure && failure.status === 404))
          throw failure
      }
    )
    await subscription.unsubscribe()
  }

  const act = (change: () => Promise<void>) => {
    setPending(true)
    setError(undefined)
    change()
      .catch((failure: unknown) => setError(failure))
      .then(stateNow)
      .then(setState, () => setState("off"))
      .finally(() => setPending(false))
  }

  return (
    <fieldset class="panel">
      <legend>This browser</legend>
      <p role="status" class="muted">
        {describe[state]}
      </p>
      {state === "off" ? (
        <div>
          <button type="button" disabled={pending} aria-busy={pending} onClick={() => act(turnOn)}>
            Notify this browser
          </button>
        </div>
      ) : null}
      {state === "on" ? (
        <div>
          <button type="button" disabled={pending} aria-busy={pending} onClick={() => act(turnOff)}>
            Stop notifying this browser
          </button>
        </div>
      ) : null}
      <ErrorMessage error={error} />
    </fieldset>
  )
}
