import { Effect, Layer } from "effect"
import { IdempotencyStore, type KeptResponse } from "../../core/idempotency/IdempotencyStore.ts"

interface Row {
  readonly fingerprint: string
  readonly expiresAtMs: number
  readonly response: KeptResponse | undefined
}

/**
 * Idempotency records in a map per scope; every operation is synchronous, so each is atomic. Units of work
 * over memory take turns (adapters/memory/TransactionsMemory.ts), so a claim never meets another unit's
 * live claim: a record without a response is a leftover of an undone unit and counts as absent.
 */
export const IdempotencyStoreMemory = Layer.sync(IdempotencyStore, () => {
  const scopes = new Map<string, Map<string, Row>>()
  const rowsOf = (scope: string) => {
    let rows = scopes.get(scope)
    if (rows === undefined) scopes.set(scope, (rows = new Map()))
    return rows
  }

  return IdempotencyStore.of({
    claim: ({ scope, key, fingerprint, nowMs, expiresAtMs }) =>
      Effect.sync(() => {
        const rows = rowsOf(scope)
        const row = rows.get(key)
        // A record older than its expiry, or never completed, counts as absent.
        if (row === undefined || row.expiresAtMs < nowMs || row.response === undefined) {
          rows.set(key, { fingerprint, expiresAtMs, response: undefined })
          return { _tag: "Claimed" } as const
        }
        if (row.fingerprint !== fingerprint) return { _tag: "Mismatch" } as const
        return { _tag: "Replay", response: row.response } as const
      }),
    complete: ({ scope, key, response, expiresAtMs }) =>
      Effect.sync(() => {
        const rows = rowsOf(scope)
        const row = rows.get(key)
        if (row !== undefined && row.response === undefined) {
          rows.set(key, {
            ...row,
            expiresAtMs,
            response: { status: response.status, contentType: response.contentType, body: response.body }
          })
        }
      }),
    release: ({ scope, key }) =>
      Effect.sync(() => {
        const rows = scopes.get(scope)
        if (rows?.get(key)?.response === undefined) rows?.delete(key)
        if (rows?.size === 0) scopes.delete(scope)
      }),
    purgeExpired: (nowMs) =>
      Effect.sync(() => {
        let purged = 0
        for (const [scope, rows] of scopes) {
          for (const [key, row] of rows) {
            if (row.expiresAtMs < nowMs) {
              rows.delete(key)
              purged++
            }
          }
          if (rows.size === 0) scopes.delete(scope)
        }
        return purged
      })
  })
})
