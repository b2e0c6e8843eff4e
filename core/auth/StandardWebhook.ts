import { createHmac } from "node:crypto"

/**
 * The Standard Webhooks signature (`webhook-signature: v1,<base64>`): HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed with the base64 bytes after the `whsec_` prefix,
 * so receivers can verify with off-the-shelf libraries.
 */
export const signStandardWebhook = (input: {
  readonly secret: string
  readonly id: string
  readonly timestamp: number
  readonly body: string
}): string => {
  const key = Buffer.from(input.secret.startsWith("whsec_") ? input.secret.slice(6) : input.secret, "base64")
  const mac = createHmac("sha256", key).update(`${input.id}.${input.timestamp}.${input.body}`).digest("base64")
  return `v1,${mac}`
}
