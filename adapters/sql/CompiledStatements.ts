import type { SqlClient } from "effect/sql"

/** The part of the SQL client's statement compiler this touches: its two caches of compiled statements. */
interface CompilerCaches {
  readonly statementCache?: unknown
  readonly statementCacheNoTransform?: unknown
}

/**
 * Makes `client`'s statement compiler keep nothing it compiles. The compiler keeps each statement's compiled
 * text and parameters in a `WeakMap` keyed by the statement, so that a statement run twice is compiled once.
 * Here nearly every statement is made for one run (a request builds its own), so that cache is never read back;
 * and on Node 20's V8 the value of a `WeakMap` entry whose key dies young is still carried into the old
 * generation by the young collection, where only a full collection frees it. Every statement's text and
 * parameters thus outlived its request: measured at 32 connections of decision creates, a third of what the
 * young collections promoted, and 5 to 8 % of the server's CPU per create (docs/performance.md). A statement run
 * more than once (one a layer builds when it starts, say) is compiled again at each run: a few microseconds.
 *
 * Both caches (with and without the client's name transforms) are shared by every copy of the compiler, so
 * their writes are turned off on the caches themselves. A later version of the SQL client may keep them
 * elsewhere: then this changes nothing, and the contract test that looks for them fails.
 */
export const keepNoCompiledStatements = (client: SqlClient.SqlClient): void => {
  const compiler = (client.unsafe("SELECT 1") as unknown as { readonly compiler?: CompilerCaches }).compiler
  for (const cache of [compiler?.statementCache, compiler?.statementCacheNoTransform]) {
    if (cache instanceof WeakMap) Object.defineProperty(cache, "set", { value: keepNothing, configurable: true })
  }
}

function keepNothing(this: WeakMap<object, unknown>) {
  return this
}
