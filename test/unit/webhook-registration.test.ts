import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { open, seal } from "../../core/auth/SecretBox.ts"
import { checkWebhookUrl } from "../../core/kernel/WebhookUrl.ts"

const production = { allowLoopbackHttp: false }
const development = { allowLoopbackHttp: true }

describe("webhook URLs", () => {
  it("accepts public https URLs", () => {
    for (const url of [
      "https://hooks.example.com/decisions",
      "https://203.0.113.7:8443/x?y=1",
      "https://[2001:db8::1]/h"
    ]) {
      assert.isTrue(Result.isSuccess(checkWebhookUrl(url, production)), url)
    }
  })

  it("refuses http, credentials, and loopback or private addresses in production", () => {
    for (const url of [
      "http://hooks.example.com/x",
      "ftp://example.com",
      "not a url",
      "https://user:pass@example.com/",
      "https://localhost/x",
      "https://api.localhost/x",
      "https://127.0.0.1/x",
      "https://10.1.2.3/x",
      "https://172.16.0.1/x",
      "https://192.168.1.1/x",
      "https://169.254.169.254/latest/meta-data",
      "https://100.64.0.1/x",
      "https://0.0.0.0/x",
      "https://[::1]/x",
      "https://[fd00::1]/x",
      "https://[fe80::1]/x",
      "https://[::ffff:10.0.0.1]/x",
      "https://printer.local/x",
      "https://db.internal/x",
      // The same names with the root's trailing dot.
      "https://localhost./x",
      "https://api.localhost./x",
      "https://printer.local./x",
      "https://db.internal./x"
    ]) {
      assert.isTrue(Result.isFailure(checkWebhookUrl(url, production)), url)
    }
  })

  it("allows http to loopback outside production only", () => {
    for (const url of ["http://127.0.0.1:9999/hook", "http://localhost:3000/hook", "http://[::1]:8080/h"]) {
      assert.isTrue(Result.isSuccess(checkWebhookUrl(url, development)), url)
      assert.isTrue(Result.isFailure(checkWebhookUrl(url, production)), url)
    }
    assert.isTrue(Result.isFailure(checkWebhookUrl("http://10.0.0.1/hook", development)))
  })
})

describe("sealed secrets", () => {
  it("open what was sealed with the same key, and nothing else", () => {
    const sealed = seal("key-one", "whsec_secret")
    assert.notInclude(sealed, "whsec_secret")
    assert.strictEqual(open("key-one", sealed), "whsec_secret")
    assert.isUndefined(open("key-two", sealed))
    const [v, iv, body] = sealed.split(".")
    const flipped = body!.slice(0, 5) + (body![5] === "A" ? "B" : "A") + body!.slice(6)
    assert.isUndefined(open("key-one", `${v}.${iv}.${flipped}`))
    assert.isUndefined(open("key-one", "garbage"))
    assert.notStrictEqual(seal("key-one", "same"), seal("key-one", "same"))
  })
})
