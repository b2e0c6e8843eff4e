const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Polls `probe` every 100 ms until it answers something, or fails after `timeoutMs` naming `what`. A probe
 * that throws counts as not yet (a server still starting, an answer not yet in the shape looked for).
 */
export const until = async <A>(what: string, probe: () => Promise<A | undefined>, timeoutMs = 30_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  while (true) {
    const value = await probe().catch(() => undefined)
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(100)
  }
}
