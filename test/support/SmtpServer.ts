import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"

/** One message as the test SMTP server received it, decoded. */
export interface ReceivedMail {
  /** Envelope recipients (RCPT TO), lower case. */
  readonly to: ReadonlyArray<string>
  /** Envelope sender (MAIL FROM). */
  readonly from: string
  readonly headers: ReadonlyMap<string, string>
  readonly subject: string
  readonly text: string
  readonly html: string
}

/** What the server answers to the next messages: accept, or refuse with an SMTP reply code. */
export type SmtpBehaviour = "accept" | { readonly refuse: number }

// --- A small MIME reader: enough for what nodemailer writes (RFC 2045-2047): headers, multipart, QP/base64. ---

const decodeQuotedPrintable = (body: string): Buffer => {
  const soft = body.replace(/=\r?\n/g, "")
  const bytes: Array<number> = []
  for (let i = 0; i < soft.length; i++) {
    const hex = soft.slice(i + 1, i + 3)
    if (soft[i] === "=" && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16))
      i += 2
    } else bytes.push(...Buffer.from(soft[i]!, "utf8"))
  }
  return Buffer.from(bytes)
}

const decodeBody = (body: string, encoding: string): string => {
  switch (encoding.toLowerCase()) {
    case "base64":
      return Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8")
    case "quoted-printable":
      return decodeQuotedPrintable(body).toString("utf8")
    default:
      return body
  }
}

/** Encoded words (RFC 2047) in a header value: `=?UTF-8?Q?...?=` and `=?UTF-8?B?...?=`. */
const decodeWords = (value: string): string =>
  value
    .replace(/\?=\s+=\?/g, "?==?")
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_, _charset: string, kind: string, text: string) =>
      kind.toUpperCase() === "B"
        ? Buffer.from(text, "base64").toString("utf8")
        : decodeQuotedPrintable(text.replace(/_/g, " ")).toString("utf8")
    )

interface Part {
  readonly headers: Map<string, string>
  readonly body: string
}

const splitPart = (raw: string): Part => {
  const at = raw.search(/\r?\n\r?\n/)
  const head = at < 0 ? raw : raw.slice(0, at)
  const body = at < 0 ? "" : raw.slice(at).replace(/^\r?\n\r?\n/, "")
  const headers = new Map<string, string>()
  for (const line of head.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const colon = line.indexOf(":")
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
  }
  return { headers, body }
}

const leaves = (part: Part): ReadonlyArray<{ readonly type: string; readonly text: string }> => {
  const contentType = part.headers.get("content-type") ?? "text/plain"
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1]
  if (contentType.toLowerCase().startsWith("multipart/") && boundary !== undefined) {
    const sections = part.body.split(`--${boundary}`).slice(1)
    return sections
      .filter((section) => !section.startsWith("--"))
      .flatMap((section) => leaves(splitPart(section.replace(/^\r?\n/, ""))))
  }
  const type = contentType.split(";")[0]!.trim().toLowerCase()
  // Lines travel as CRLF on the wire; readers see them as "\n".
  const text = decodeBody(part.body, part.headers.get("content-transfer-encoding") ?? "7bit").replace(/\r\n/g, "\n")
  return [{ type, text }]
}

export const parseMail = (raw: string, envelope: { to: ReadonlyArray<string>; from: string }): ReceivedMail => {
  const root = splitPart(raw)
  const parts = leaves(root)
  const headers = new Map([...root.headers].map(([name, value]) => [name, decodeWords(value)]))
  return {
    to: envelope.to,
    from: envelope.from,
    headers,
    subject: headers.get("subject") ?? "",
    text: parts.find((p) => p.type === "text/plain")?.text ?? "",
    html: parts.find((p) => p.type === "text/html")?.text ?? ""
  }
}

/**
 * A real SMTP server for tests (the `smtp-server` package) on an ephemeral loopback port, without TLS or
 * authentication. It keeps every accepted message, decoded; `behave` makes it refuse the next messages.
 */
export const startSmtpServer = async () => {
  const received: Array<ReceivedMail> = []
  let behaviour: SmtpBehaviour = "accept"
  let refused = 0
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", () => {
        if (behaviour !== "accept") {
          refused++
          const error = new Error("refused") as Error & { responseCode: number }
          error.responseCode = behaviour.refuse
          return callback(error)
        }
        const envelope = {
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address
        }
        received.push(parseMail(Buffer.concat(chunks).toString("utf8"), envelope))
        callback()
      })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.server.address() as AddressInfo
  /** Messages to `address`, oldest first. */
  const to = (address: string) => received.filter((m) => m.to.includes(address.toLowerCase()))
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    /** How many messages were refused (by `behave`). */
    refused: () => refused,
    to,
    behave: (next: SmtpBehaviour) => {
      behaviour = next
    },
    /** Waits (polling, up to `timeoutMs`) until `address` has received `count` messages; then answers them. */
    waitFor: async (address: string, count = 1, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs
      while (to(address).length < count) {
        if (Date.now() > deadline) throw new Error(`no email for ${address} (have ${to(address).length})`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      return to(address)
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

export type SmtpTestServer = Awaited<ReturnType<typeof startSmtpServer>>
