import { Formatter, Logger } from "effect"

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
): {
  readonly logger: Logger.Logger<Message, void>
  readonly flush: () => void
  /** Writes plain text (lines without their newline) in turn with the log lines, not ahead of those waiting. */
  readonly print: (text: string) => void
} => {
  let waiting: Array<string> = []
  const flush = () => {
    if (waiting.length === 0) return
    const text = `${waiting.join("\n")}\n`
    waiting = []
    write(text)
  }
  const push = (line: string) => {
    if (waiting.length === 0) setImmediate(flush)
    waiting.push(line)
  }
  const logger = Logger.make<Message, void>((options) => push(format.log(options)))
  return { logger, flush, print: push }
}

type Structured = typeof Logger.formatStructured extends Logger.Logger<unknown, infer Line> ? Line : never

const isScalar = (value: unknown) =>
  typeof value === "string" || typeof value === "number" || typeof value === "boolean"

/**
 * A line made only of text, numbers and booleans: JSON.stringify alone writes it as `Logger.formatJson` does.
 * Anything else (an object, a Redacted value, a bigint) goes through the formatter, which redacts.
 */
const isPlainLine = (line: Structured): boolean => {
  if (typeof line.message !== "string" || (line.cause !== undefined && typeof line.cause !== "string")) return false
  for (const key in line.annotations) if (!isScalar(line.annotations[key])) return false
  for (const key in line.spans) if (typeof line.spans[key] !== "number") return false
  return true
}

/**
 * The lines of `Logger.formatJson`, character for character. Most lines (one per answer) hold only text and
 * numbers, and are written without the formatter's per-value walk.
 */
export const formatJsonLine: Logger.Logger<unknown, string> = Logger.map(Logger.formatStructured, (line) =>
  isPlainLine(line) ? JSON.stringify(line) : Formatter.formatJson(line)
)

/**
 * JSON lines on standard output, written once per turn, and the rest when the process exits; `print` writes
 * plain text among them (the start banner, development sign-in links: for a person to read, not a collector).
 */
export const jsonLinesToStdout = (): {
  readonly logger: Logger.Logger<unknown, void>
  readonly print: (text: string) => void
} => {
  const { logger, flush, print } = makeLineLogger(formatJsonLine, (text) => process.stdout.write(text))
  process.once("exit", flush)
  return { logger, print }
}
