import { defineConfig } from "vitest/config"

// vitest 5's reporter calls Map.groupBy (Node 21+); this project runs on Node 20.
if (typeof (Map as { groupBy?: unknown }).groupBy !== "function") {
  Object.defineProperty(Map, "groupBy", {
    value: <K, T>(items: Iterable<T>, keyOf: (item: T, index: number) => K) => {
      const groups = new Map<K, Array<T>>()
      let index = 0
      for (const item of items) {
        const key = keyOf(item, index++)
        const group = groups.get(key)
        if (group === undefined) groups.set(key, [item])
        else group.push(item)
      }
      return groups
    }
  })
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The web apps the servers under test serve (npm run build:web), built when their sources changed; the dump
    // of a new embedded database the in-memory test databases start from, made once per PGlite version.
    globalSetup: ["test/support/BuildWebApps.ts", "test/support/FreshPglite.ts"],
    // Quiet runs: what a test logs is shown only when it fails.
    silent: "passed-only",
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
