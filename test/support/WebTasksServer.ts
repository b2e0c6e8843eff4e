import { assert } from "vitest"
import { freePort, runSeed, startServer, tempDataDir } from "./ServerProcess.ts"
import { startSmtpServer } from "./SmtpServer.ts"

/**
 * The bundled server for a browser walk-through of the task inbox: on a new embedded database loaded with the
 * demo data (Alice, Bob and Carol in the hub's directory; in the task inbox projects, meetings, tasks in every
 * list and open proposals), sending its emails to an SMTP server inside the test. `env` is given to the seed
 * and the server alike (the task inbox's record store). Answers Alice's API key from the seed's output.
 */
export const startSeededServer = async (options: {
  readonly adminKey: string
  readonly env: Record<string, string>
}) => {
  const dataDir = tempDataDir()
  const port = await freePort()
  const tasks = `http://127.0.0.1:${port}`
  const seeded = await runSeed({ DATA_DIR: dataDir, TASKS_PUBLIC_URL: tasks, ...options.env })
  assert.strictEqual(seeded.code, 0, seeded.output)
  const aliceKey = /alice@demo\.example\.com\s+(\S+)/.exec(seeded.output)![1]!
  const demoOrgId = /\(organization (\S+)\)/.exec(seeded.output)![1]!
  const smtp = await startSmtpServer()
  const server = await startServer(
    {
      DATA_DIR: dataDir,
      TASKS_PORT: String(port),
      TASKS_PUBLIC_URL: tasks,
      HUB_ADMIN_KEY: options.adminKey,
      SMTP_URL: smtp.url,
      SMTP_FROM: "Hub <hub@demo.example.com>",
      HUB_WORKER_POLL_MS: "100",
      ...options.env
    },
    // A loaded machine compiles the server slowly.
    { readyWithinMillis: 180_000 }
  )
  return { server, smtp, tasks, hub: `http://127.0.0.1:${server.ports.hub}`, aliceKey, demoOrgId }
}
