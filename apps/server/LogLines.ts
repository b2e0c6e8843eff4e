import { Logger } from "effect"

/**
 * A logger that writes the lines of one turn of the event loop together: formatted at once, in order, and
 * written as one text when the turn is over (at `setImmediate`) instead of one write each. A busy server logs a
 * line per request, and many requests end in one turn (a change answers all its long-polls at once), so this
 * is one system call where there were dozens. `flush` writes what waits at once; the server calls it when
 * the process exits. What a process killed outright had not written yet (lines of its last turn) is lost.
 */
export const makeLineLogger = <Message>(
  format: Logger.Logger<Message, string>,
  write: (text: string) => void
): { readonly logger: Logger.Logger<Message, void>; readonly flush: () => void } => {
  let waiting: Array<string> = []
  const flush = () => {
    if (waiting.length === 0) return
    const text = `${waiting.join("\n")}\n`
    waiting = []
    write(text)
  }
  const logger = Logger.make<Message, void>((options) => {
    if (waiting.length === 0) setImmediate(flush)
    waiting.push(format.log(options))
  })
  return { logger, flush }
}

/** JSON lines on standard output, written once per turn, and the rest when the process exits. */
export const jsonLinesToStdout = (): Logger.Logger<unknown, void> => {
  const { logger, flush } = makeLineLogger(Logger.formatJson, (text) => process.stdout.write(text))
  process.once("exit", flush)
  return logger
}
