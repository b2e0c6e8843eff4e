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
  /** CPU seconds the serving processes have used so far: read before and after the measured run. */
  readonly cpuSeconds?: (() => number) | undefined
  /** Told when the measured run starts and when its last answer is in (a profile of that window alone). */
  readonly measured?: ((phase: "start" | "end") => void | Promise<void>) | undefined
}

export interface LoadOptions {
  readonly connections: number
  readonly seconds: number
  readonly warmupSeconds: number
}

interface RunResult {
  readonly errors: number
  /** From the start to the last answer. (autocannon's own duration ends on its next one-second tick.) */
  readonly seconds: number
}

const run = (target: Target, connections: number, amount: number, record: (status: number, ms: number) => void) =>
  new Promise<RunResult>((resolve, reject) => {
    const first = target.next()
    const started = performance.now()
    let lastAnswer = started
    const instance = autocannon(
      {
        url: target.origin,
        connections,
        amount,
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
      (error, result) =>
        error
          ? reject(error)
          : resolve({
              errors: result.errors + result.timeouts,
              seconds: Math.max(lastAnswer - started, 1) / 1000
            })
    )
    instance.on("response", (_client, statusCode, _bytes, responseTime) => {
      lastAnswer = performance.now()
      record(statusCode, responseTime)
    })
  })

/**
 * Drives a target with autocannon: warm-up rounds whose answers are only checked, then the measured run.
 *
 * Each run sends a fixed number of requests and waits for every answer, rather than stopping on a timer: a
 * timed stop drops the connections with requests still in flight, and the server's recovery from those
 * aborted requests would then be measured as part of the next run. The measured run's size comes from the
 * rate of the last warm-up round, so it lasts about `seconds`.
 *
 * Latencies are kept in full from autocannon's per-response event (its own histogram rounds to whole
 * milliseconds, too coarse for a raw baseline). Every answer outside 2xx and every connection error is
 * counted, warm-up included. The CPU time the serving processes spend per answer is read from the target's
 * `cpuSeconds` around the measured run: steadier than req/s on a shared machine, and the work that the run
 * set off after its answers (relays, workers) and finished within the run is included.
 */
export const drive = async (target: Target, options: LoadOptions): Promise<Figures> => {
  const non2xx: Record<string, number> = {}
  let errors = 0
  const countStatus = (status: number) => {
    if (status < 200 || status > 299) non2xx[status] = (non2xx[status] ?? 0) + 1
  }
  const round = Math.max(options.connections * 5, 20)
  let rate = 0
  const warmupUntil = performance.now() + options.warmupSeconds * 1000
  do {
    const warm = await run(target, options.connections, round, countStatus)
    errors += warm.errors
    rate = round / warm.seconds
  } while (performance.now() < warmupUntil)
  let latencies: Array<number> = []
  const amount = Math.max(options.connections * 10, Math.round(rate * options.seconds))
  await target.measured?.("start")
  const cpuBefore = target.cpuSeconds?.()
  const result = await run(target, options.connections, amount, (status, ms) => {
    countStatus(status)
    latencies.push(ms)
  })
  const cpuAfter = target.cpuSeconds?.()
  await target.measured?.("end")
  const sorted = Float64Array.from(latencies).sort()
  latencies = []
  return {
    cpuMsPerRequest:
      cpuBefore === undefined || cpuAfter === undefined ? undefined : ((cpuAfter - cpuBefore) * 1000) / sorted.length,
    requests: sorted.length,
    seconds: result.seconds,
    requestsPerSecond: sorted.length / result.seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    non2xx,
    errors: errors + result.errors
  }
}
