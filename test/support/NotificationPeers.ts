import { createECDH, createDecipheriv, hkdfSync, randomBytes } from "node:crypto"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"

/** One request a peer received. */
export interface PeerRequest {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
}

/**
 * A local HTTP peer: it records every POST and answers what `answer` says for its path (default 200). Stands
 * in for a chat service's incoming webhook and for a browser vendor's push service.
 */
export const startPeer = async (defaultStatus = 200) => {
  const received: Array<PeerRequest> = []
  const statusByPath = new Map<string, number>()
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const path = req.url ?? "/"
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks) })
      res.writeHead(statusByPath.get(path) ?? defaultStatus).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    to: (path: string) => received.filter((r) => r.path === path),
    answer: (path: string, status: number) => void statusByPath.set(path, status),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** A browser's push subscription keys: a P-256 key pair and a 16-byte auth secret (what PushManager makes). */
export const newPushKeys = () => {
  const ecdh = createECDH("prime256v1")
  ecdh.generateKeys()
  const auth = randomBytes(16)
  return {
    json: { p256dh: ecdh.getPublicKey().toString("base64url"), auth: auth.toString("base64url") },
    /**
     * Decrypts one push message body as a browser does: the aes128gcm content coding with the Web Push key
     * derivation (the application server's ephemeral key and the salt come in the body's header).
     */
    decrypt: (body: Buffer): string => {
      const salt = body.subarray(0, 16)
      const idLength = body.readUInt8(20)
      const serverKey = body.subarray(21, 21 + idLength)
      const ciphertext = body.subarray(21 + idLength)
      const shared = ecdh.computeSecret(serverKey)
      const keyInfo = Buffer.concat([Buffer.from("WebPush: info\0"), ecdh.getPublicKey(), serverKey])
      const ikm = Buffer.from(hkdfSync("sha256", shared, auth, keyInfo, 32))
      const cek = Buffer.from(hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: aes128gcm\0"), 16))
      const nonce = Buffer.from(hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: nonce\0"), 12))
      const decipher = createDecipheriv("aes-128-gcm", cek, nonce)
      decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16))
      const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - 16)), decipher.final()])
      // The last record ends with the delimiter 2, then any zero padding.
      let end = padded.length - 1
      while (end >= 0 && padded[end] === 0) end--
      if (padded[end] !== 2) throw new Error("not the last record")
      return padded.subarray(0, end).toString("utf8")
    }
  }
}
