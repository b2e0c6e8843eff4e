import { Effect, Layer } from "effect"
import { ShortenerHttp } from "../../adapters/http/hub/ShortenerHttp.ts"
import { ShortLinkStoreMemory } from "../../adapters/memory/hub/ShortLinkStoreMemory.ts"
import { TransactionsMemory } from "../../adapters/memory/TransactionsMemory.ts"
import { ShortLinkStoreSql } from "../../adapters/sql/hub/ShortLinkStoreSql.ts"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import { ShortenerOwn } from "../../core/hub/ShortLinks.ts"
import { sqlBackends } from "../support/Databases.ts"
import { standIn, unreachableUrl } from "../support/StandIn.ts"
import { hubSqlOn } from "./hub-sql-layers.ts"
import { ShortenerContract, ShortLinkStoreContract } from "./ShortLinks.contract.ts"

const publicUrl = "https://hub.example.test"

ShortLinkStoreContract("memory", ShortLinkStoreMemory)
for (const backend of sqlBackends) ShortLinkStoreContract(backend.name, hubSqlOn(ShortLinkStoreSql, backend))

ShortenerContract(
  "the hub's own, memory",
  ShortenerOwn(publicUrl).pipe(Layer.provide(Layer.merge(ShortLinkStoreMemory, TransactionsMemory)))
)
for (const backend of sqlBackends) {
  ShortenerContract(
    `the hub's own, ${backend.name}`,
    ShortenerOwn(publicUrl).pipe(Layer.provide(hubSqlOn(Layer.merge(ShortLinkStoreSql, TransactionsSql), backend))),
    // A database without the hub's tables: every write fails.
    ShortenerOwn(publicUrl).pipe(
      Layer.provide(Layer.merge(ShortLinkStoreSql, TransactionsSql)),
      Layer.provide(backend.layer)
    )
  )
}

/** An external shortener's stand-in: numbered links on its own host, the same one for the same address. */
const externalShortener = Layer.unwrap(
  Effect.gen(function* () {
    const codes = new Map<string, number>()
    const upstream = yield* standIn((seen) => {
      if (seen.method !== "POST") return { status: 405, json: { error: "method" } }
      const url = (JSON.parse(seen.body) as { url: string }).url
      if (!codes.has(url)) codes.set(url, codes.size + 1)
      return { status: 201, json: { data: { url: `http://${seen.headers.host}/x/${codes.get(url)}` } } }
    })
    return ShortenerHttp({ url: `${upstream.url}/shorten` })
  })
)

ShortenerContract(
  "external, over HTTP",
  externalShortener,
  Layer.unwrap(Effect.map(unreachableUrl, (url) => ShortenerHttp({ url: `${url}/shorten` })))
)
