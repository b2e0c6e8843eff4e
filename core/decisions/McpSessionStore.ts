import { Context, type Effect } from "effect"

/**
 * An agent's MCP session, kept where every instance of the service can read it: the next request of a
 * session may reach any of them. Only the hash of the session id is kept.
 */
export interface McpSession {
  /** SHA-256 (hex) of the `Mcp-Session-Id` the client holds. */
  readonly idHash: string
  /** The caller key that opened it: no other key can use or end it. */
  readonly keyId: string
  /** The protocol revision agreed at `initialize`. */
  readonly protocolVersion: string
  /** The client's `initialize` params as it sent them (bounded), replayed to serve its next requests. */
  readonly initialize: unknown
  /** Epoch milliseconds of its last request. */
  readonly lastSeenAt: number
}

/** MCP sessions: opened at `initialize`, found while in use, forgotten when idle, ended, or over a key's cap. */
export class McpSessionStore extends Context.Service<
  McpSessionStore,
  {
    /** Keeps a new session; the key's least recently used sessions beyond `maxPerKey` are forgotten. */
    readonly open: (session: McpSession, maxPerKey: number) => Effect.Effect<void>
    /** The key's session, if it was used after `idleSince`; its last use becomes `now`. */
    readonly use: (
      idHash: string,
      keyId: string,
      idleSince: number,
      now: number
    ) => Effect.Effect<McpSession | undefined>
    /** Ends the key's session; false when there was none. */
    readonly end: (idHash: string, keyId: string) => Effect.Effect<boolean>
    /** Forgets every session not used after `idleSince`. */
    readonly purgeIdle: (idleSince: number) => Effect.Effect<void>
  }
>()("core/decisions/McpSessionStore") {}
