import { useEffect, useState } from "preact/hooks"
import { getData, request } from "../shared/api.ts"
import { Callout, ErrorMessage, Loading, useId, useLoad } from "../shared/components.tsx"
import { BrowserPush } from "./BrowserPush.tsx"
import type { WorkspaceApp } from "./types.ts"

interface Preferences {
  readonly channels: ReadonlyArray<string>
  readonly emailMode: "immediate" | "digest"
  readonly chatWebhook: boolean
  readonly serviceVisible: Readonly<Record<string, boolean>>
}

const channels = [
  { name: "bell", label: "In the workspace", hint: "The feed on your home page." },
  { name: "email", label: "By email", hint: "At your sign-in address." },
  { name: "chat", label: "In a chat channel", hint: "Through a Slack-compatible incoming webhook." },
  { name: "push", label: "Browser notifications", hint: "On browsers you allowed to notify you." }
] as const

const Check = (props: {
  readonly label: string
  readonly hint?: string
  readonly checked: boolean
  readonly onChange: (checked: boolean) => void
}) => {
  const id = useId("check")
  return (
    <div class="check">
      <input
        id={id}
        type="checkbox"
        checked={props.checked}
        onChange={(e) => props.onChange(e.currentTarget.checked)}
      />
      <label for={id}>
        {props.label}
        {props.hint !== undefined ? <span class="muted small"> {props.hint}</span> : null}
      </label>
    </div>
  )
}

/** `/settings`: where and how the person is notified, and which apps may notify them. */
export const Settings = ({ apps }: { readonly apps: ReadonlyArray<WorkspaceApp> | undefined }) => {
  const loaded = useLoad("preferences", (signal) => getData<Preferences>("/api/v1/me/preferences", signal))
  const [draft, setDraft] = useState<Preferences | undefined>(undefined)
  const [chatUrl, setChatUrl] = useState("")
  const [saved, setSaved] = useState(false)
  const [pending, setPending] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const chatId = useId("chat-url")
  useEffect(() => {
    if (loaded.data !== undefined) setDraft(loaded.data)
  }, [loaded.data])
  useEffect(() => {
    document.title = "Notification settings · Workspace"
  }, [])

  if (draft === undefined)
    return loaded.error !== undefined ? (
      <ErrorMessage error={loaded.error} />
    ) : (
      <Loading label="Loading your settings" />
    )

  const change = (next: Partial<Preferences>) => {
    setSaved(false)
    setDraft({ ...draft, ...next })
  }
  const services = [...new Set([...(apps ?? []).map((app) => app.id), ...Object.keys(draft.serviceVisible)])].sort()
  const nameOf = (service: string) => apps?.find((app) => app.id === service)?.name ?? service

  const save = (body: Record<string, unknown>) => {
    setPending(true)
    setError(undefined)
    request<{ data: Preferences }>("PATCH", "/api/v1/me/preferences", { body }).then(
      (answer) => {
        setPending(false)
        setDraft(answer.data)
        setChatUrl("")
        setSaved(true)
      },
      (failure: unknown) => {
        setPending(false)
        setError(failure)
      }
    )
  }

  return (
    <div class="stack">
      <h1>Notification settings</h1>
      <p class="muted">
        These settings decide how every app notifies you, the task inbox and decisions alike: they are the only ones.
      </p>
      <form
        class="stack"
        onSubmit={(event) => {
          event.preventDefault()
          save({
            channels: draft.channels,
            emailMode: draft.emailMode,
            serviceVisible: draft.serviceVisible,
            ...(chatUrl.trim() !== "" ? { chatWebhookUrl: chatUrl.trim() } : {})
          })
        }}
      >
        <fieldset class="panel">
          <legend>Where to notify me</legend>
          {channels.map((channel) => (
            <Check
              key={channel.name}
              label={channel.label}
              hint={channel.hint}
              checked={draft.channels.includes(channel.name)}
              onChange={(on) =>
                change({
                  channels: on
                    ? [...draft.channels, channel.name]
                    : draft.channels.filter((name) => name !== channel.name)
                })
              }
            />
          ))}
        </fieldset>
        <BrowserPush onChannels={(saved) => setDraft((d) => (d === undefined ? d : { ...d, channels: saved }))} />
        <fieldset class="panel">
          <legend>Email</legend>
          {(
            [
              ["immediate", "One email per notification, as it comes"],
              ["digest", "One email now and then with everything that waited"]
            ] as const
          ).map(([mode, label]) => (
            <div class="check" key={mode}>
              <input
                id={`email-${mode}`}
                type="radio"
                name="emailMode"
                value={mode}
                checked={draft.emailMode === mode}
                onChange={() => change({ emailMode: mode })}
              />
              <label for={`email-${mode}`}>{label}</label>
            </div>
          ))}
        </fieldset>
        <fieldset class="panel">
          <legend>Chat channel</legend>
          <div class="field">
            <label for={chatId}>{draft.chatWebhook ? "Replace the webhook address" : "Webhook address"}</label>
            <span class="muted small" id={`${chatId}-hint`}>
              {draft.chatWebhook ? "A webhook is set; its address is kept secret." : "No webhook is set."}
            </span>
            <input
              id={chatId}
              type="url"
              inputMode="url"
              autoComplete="off"
              aria-describedby={`${chatId}-hint`}
              value={chatUrl}
              onInput={(e) => {
                setSaved(false)
                setChatUrl(e.currentTarget.value)
              }}
            />
          </div>
          {draft.chatWebhook ? (
            <button type="button" disabled={pending} onClick={() => save({ chatWebhookUrl: null })}>
              Remove the webhook
            </button>
          ) : null}
        </fieldset>
        {services.length > 0 ? (
          <fieldset class="panel">
            <legend>Apps that may notify me</legend>
            {services.map((service) => (
              <Check
                key={service}
                label={nameOf(service)}
                checked={draft.serviceVisible[service] !== false}
                onChange={(on) => change({ serviceVisible: { ...draft.serviceVisible, [service]: on } })}
              />
            ))}
          </fieldset>
        ) : null}
        <ErrorMessage error={error} />
        {saved ? <Callout tone="success">Your settings are saved.</Callout> : null}
        <div>
          <button type="submit" class="primary" disabled={pending} aria-busy={pending}>
            Save settings
          </button>
        </div>
      </form>
    </div>
  )
}
