import { Option } from "effect"
import type { ServerConfig } from "./Config.ts"
import { tasksPublicUrl } from "./tasks/TasksRuntime.ts"

const anyAddress = new Set(["0.0.0.0", "::", "[::]"])

export type Ports = { readonly hub: number; readonly decisions: number; readonly tasks: number }

/** How the services reach each other inside one bundled server: their own listeners, unless configured. */
export const serviceUrls = (config: ServerConfig, ports: Ports) => {
  const local = (port: number) => `http://${anyAddress.has(config.host) ? "127.0.0.1" : config.host}:${port}`
  return {
    hub: Option.getOrElse(config.hubUrl, () => local(ports.hub)).replace(/\/+$/, ""),
    decisions: Option.getOrElse(config.decisionsUrl, () => local(ports.decisions)).replace(/\/+$/, ""),
    tasks: Option.getOrElse(config.tasksUrl, () => local(ports.tasks)).replace(/\/+$/, "")
  }
}

/**
 * Where people's browsers reach each service: the hub at HUB_PUBLIC_URL (else as the services reach it), the
 * task inbox at TASKS_PUBLIC_URL, the decisions service as the hub reaches it. No trailing slash.
 */
export const publicUrls = (config: ServerConfig, ports: Ports) => {
  const urls = serviceUrls(config, ports)
  return {
    hub: Option.getOrElse(config.hubPublicUrl, () => urls.hub).replace(/\/+$/, ""),
    decisions: urls.decisions,
    tasks: tasksPublicUrl(config, ports.tasks)
  }
}
