import { useEffect, useState } from "preact/hooks"
import { Callout, Loading, useId, useLoad } from "../shared/components.tsx"
import { api, workspaceUrl, type ApiKey, type Settings } from "./api.ts"
import { formatDate, Problem, useMutation } from "./ui.tsx"

/** Display preferences, and where the notification settings are: the workspace's, the only ones. */
const Preferences = ({ saved }: { readonly saved: (settings: Settings) => void }) => {
  const loaded = useLoad("settings", api.settings)
  const [draft, setDraft] = useState<Settings | undefined>(undefined)
  const [message, setMessage] = useState<string | undefined>(undefined)
  const mutation = useMutation()
  const sentId = useId("show-sent")
  const notificationsId = useId("notifications")
  useEffect(() => setDraft(loaded.data?.settings), [loaded.data])
  if (draft === undefined)
    return loaded.error !== undefined ? <Problem error={loaded.error} retry={loaded.reload} /> : <Loading />
  return (
    <form
      class="panel stack"
      aria-label="Preferences"
      onSubmit={(event) => {
        event.preventDefault()
        setMessage(undefined)
        void mutation.start(
          (key) => api.updateSettings(key, draft),
          (answer) => {
            setDraft(answer.settings)
            setMessage("Preferences saved.")
            saved(answer.settings)
          }
        )
      }}
    >
      <fieldset>
        <legend>Display</legend>
        <label class="checkbox" for={sentId}>
          <input
            id={sentId}
            type="checkbox"
            checked={draft.showSentNav}
            onChange={(event) => setDraft({ ...draft, showSentNav: event.currentTarget.checked })}
          />
          Show “Sent” in the navigation
        </label>
      </fieldset>
      <section class="stack" aria-labelledby={notificationsId}>
        <h2 id={notificationsId}>Notifications</h2>
        <p>
          How you are notified of tasks (email as it comes or as a digest, chat, this browser) is set once for every
          app, in your workspace's notification settings: those decide.
        </p>
        {workspaceUrl !== undefined ? (
          <p>
            <a href={`${workspaceUrl}settings`}>Open your notification settings</a>
          </p>
        ) : null}
      </section>
      {message !== undefined ? <Callout tone="success">{message}</Callout> : null}
      <Problem error={mutation.error} retry={mutation.retry} />
      <p>
        <button type="submit" class="primary" disabled={mutation.pending}>
          Save preferences
        </button>
      </p>
    </form>
  )
}

const KeyRow = ({ apiKey, revoked }: { readonly apiKey: ApiKey; readonly revoked: () => void }) => {
  const [confirming, setConfirming] = useState(false)
  const mutation = useMutation()
  const nameId = useId("key-name")
  return (
    <li>
      <span class="item-text">
        <span id={nameId} class="item-title">
          {apiKey.name}
        </span>
        <span class="item-subtitle">
          <code>{apiKey.keyPrefix}…</code> · created {formatDate(apiKey.createdAt)} ·{" "}
          {apiKey.lastUsedAt !== null ? `last used ${formatDate(apiKey.lastUsedAt)}` : "never used"}
        </span>
        <Problem error={mutation.error} retry={mutation.retry} />
      </span>
      {confirming ? (
        <span class="actions">
          <button
            type="button"
            class="danger"
            aria-describedby={nameId}
            disabled={mutation.pending}
            onClick={() => void mutation.start((key) => api.revokeApiKey(key, apiKey.id), revoked)}
          >
            Revoke now
          </button>
          <button type="button" onClick={() => setConfirming(false)}>
            Keep
          </button>
        </span>
      ) : (
        <button type="button" aria-describedby={nameId} onClick={() => setConfirming(true)}>
          Revoke
        </button>
      )}
    </li>
  )
}

/** The person's API keys: name one and generate it (its secret is shown once), list and revoke. */
const ApiKeys = () => {
  const loaded = useLoad("api-keys", api.apiKeys)
  const [name, setName] = useState("")
  const [secret, setSecret] = useState<{ readonly name: string; readonly key: string } | undefined>(undefined)
  const [message, setMessage] = useState<string | undefined>(undefined)
  const mutation = useMutation()
  const nameId = useId("api-key-name")
  const secretId = useId("api-key-secret")
  return (
    <div class="stack">
      <p class="muted">
        A key lets a script or an agent use the task inbox as you: send it as the <code>X-API-Key</code> header.
      </p>
      <form
        class="panel"
        aria-label="Generate an API key"
        onSubmit={(event) => {
          event.preventDefault()
          setMessage(undefined)
          void mutation.start(
            (key) => api.createApiKey(key, name.trim()),
            (answer) => {
              setSecret({ name: answer.apiKey.name, key: answer.key })
              setName("")
              loaded.reload()
            }
          )
        }}
      >
        <div class="field">
          <label for={nameId}>Key name</label>
          <span id={`${nameId}-hint`} class="muted small">
            Say where it will be used, such as “laptop script”.
          </span>
          <input
            id={nameId}
            required
            maxLength={100}
            value={name}
            aria-describedby={`${nameId}-hint`}
            onInput={(event) => setName(event.currentTarget.value)}
          />
        </div>
        <Problem error={mutation.error} retry={mutation.retry} />
        <button type="submit" class="primary" disabled={mutation.pending}>
          Generate key
        </button>
      </form>
      {secret !== undefined ? (
        <Callout tone="warning">
          <p>
            <strong>Copy the key “{secret.name}” now.</strong> It is shown only this once; the server keeps only a hash
            of it.
          </p>
          <div class="field">
            <label for={secretId}>New API key</label>
            <input
              id={secretId}
              class="secret"
              readOnly
              value={secret.key}
              onFocus={(event) => event.currentTarget.select()}
            />
          </div>
          <div class="actions">
            <button
              type="button"
              onClick={() =>
                void navigator.clipboard?.writeText(secret.key).then(
                  () => setMessage("Copied."),
                  () => setMessage("Select the key and copy it.")
                )
              }
            >
              Copy
            </button>
            <button type="button" onClick={() => setSecret(undefined)}>
              Done, hide it
            </button>
          </div>
          {message !== undefined ? <p role="status">{message}</p> : null}
        </Callout>
      ) : null}
      <h2>Your keys</h2>
      <Problem error={loaded.error} retry={loaded.reload} />
      {loaded.data === undefined ? (
        loaded.error === undefined ? (
          <Loading />
        ) : null
      ) : loaded.data.apiKeys.length === 0 ? (
        <p class="muted">No keys yet.</p>
      ) : (
        <ul class="item-list" aria-label="Your API keys">
          {loaded.data.apiKeys.map((apiKey) => (
            <KeyRow key={apiKey.id} apiKey={apiKey} revoked={loaded.reload} />
          ))}
        </ul>
      )}
    </div>
  )
}

/** Settings: preferences, and the API-key tab. */
export const SettingsPage = ({
  tab,
  saved
}: {
  readonly tab: "preferences" | "api-keys"
  readonly saved: (s: Settings) => void
}) => {
  useEffect(() => {
    document.title = `${tab === "api-keys" ? "API keys" : "Settings"} · Task inbox`
  }, [tab])
  return (
    <div class="stack">
      <h1>Settings</h1>
      <nav class="tablist" aria-label="Settings sections">
        <a class="tab" href="/settings" aria-current={tab === "preferences" ? "page" : undefined}>
          Preferences
        </a>
        <a class="tab" href="/settings/api-keys" aria-current={tab === "api-keys" ? "page" : undefined}>
          API keys
        </a>
      </nav>
      {tab === "api-keys" ? <ApiKeys /> : <Preferences saved={saved} />}
    </div>
  )
}
