import autocannon from "autocannon"
import { percentile, type Figures } from "./Report.ts"

/** One request to send: what varies per request (ids, signatures, idempotency keys) is built fresh each time. */
export interface RequestShape {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly body?: string | undefined
}

export interface Target {
  readonly origin: string
  /** Called once per request sent, so every request may differ. */
  readonly next: () => RequestShape
}

export interface LoadOptions {
  readonly connections: number
  readonly seconds: number
  readonly warmupSeconds: number
}

const run = (target: Target, connections: number, seconds: number, record: (status: number, ms: number) => void) =>
  new Promise<autocannon.Result>((resolve, reject) => {
    const first = target.next()
    const instance = autocannon(
      {
        url: target.origin,
        connections,
        duration: seconds,
        timeout: 30,
        requests: [
          {
            method: first.method,
            path: first.path,
            setupRequest: (request) => {
              const shape = target.next()
              return {
                ...request,
                method: shape.method,
                path: shape.path,
                headers: { ...shape.headers },
                ...(shape.body === undefined ? {} : { body: shape.body })
              }
            }
          }
        ]
      },
      (error, result) => (error ? reject(error) : resolve(result))
    )
    instance.on("response", (_client, statusCode, _bytes, responseTime) => record(statusCode, responseTime))
  })

/**
 * Drives a target with autocannon: a warm-up whose answers are only checked, then the measured run. Latencies
 * are kept in full from autocannon's per-response event (its own histogram rounds to whole milliseconds, too
 * coarse for a raw baseline). Every answer outside 2xx and every connection error is counted, warm-up included.
 */
export const drive = async (target: Target, options: LoadOptions): Promise<Figures> => {
  const non2xx: Record<string, number> = {}
  const countStatus = (status: number) => {
    if (status < 200 || status > 299) non2xx[status] = (non2xx[status] ?? 0) + 1
  }
  const warmup =
    options.warmupSeconds > 0 ? await run(target, options.connections, options.warmupSeconds, countStatus) : undefined
  let latencies: Array<number> = []
  const result = await run(target, options.connections, options.seconds, (status, ms) => {
    countStatus(status)
    latencies.push(ms)
  })
  const sorted = Float64Array.from(latencies).sort()
  latencies = []
  return {
    requests: sorted.length,
    seconds: result.duration,
    requestsPerSecond: sorted.length / result.duration,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    non2xx,
    errors: result.errors + result.timeouts + (warmup === undefined ? 0 : warmup.errors + warmup.timeouts)
  }
}
