import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as fc from "fast-check"
import { createHmac } from "node:crypto"
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from "jose"
import { mint, verify } from "../../core/auth/IdentityToken.ts"

const key = "embed-key-0123456789-abcdefghijklmnop"
const issuer = "platform-hub"
const audience = "decisions"
const now = 1_800_000_000
const encoder = new TextEncoder()

const check = (
  token: string,
  overrides: Partial<{ key: string; issuer: string; audience: string; nowSeconds: number }> = {}
) => Effect.runPromiseExit(verify({ token, key, issuer, audience, nowSeconds: now, ...overrides }))

const refused = async (token: string, overrides?: Parameters<typeof check>[1]) => {
  const exit = await check(token, overrides)
  assert.isTrue(Exit.isFailure(exit), "the token must be refused")
  if (Exit.isFailure(exit)) {
    const reason = exit.cause.reasons[0]
    assert.strictEqual(reason?._tag === "Fail" ? (reason.error as { _tag: string })._tag : "other", "Unauthorized")
  }
}

const valid = (
  claims: Record<string, unknown> = {},
  iat = now,
  exp = now + 300,
  header: Record<string, unknown> = {}
) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", typ: "JWT", ...header })
    .setIssuer(issuer)
    .setAudience(audience)
    .setSubject("ada@example.com")
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(encoder.encode(key))

describe("AUTH-4 identity tokens (property)", () => {
  it("mint then verify round-trips with the normalised subject and companyId", async () => {
    const token = await Effect.runPromise(
      mint({
        key,
        issuer,
        audience,
        subject: "  Ada@Example.COM ",
        companyId: "org_1",
        orgRole: "ADMIN",
        nowSeconds: now
      })
    )
    const exit = await check(token)
    assert.isTrue(Exit.isSuccess(exit))
    if (Exit.isSuccess(exit)) {
      assert.strictEqual(exit.value.email, "ada@example.com")
      assert.strictEqual(exit.value.companyId, "org_1")
      assert.strictEqual(exit.value.orgRole, "ADMIN")
      assert.strictEqual(exit.value.expiresAt - exit.value.issuedAt, 300)
    }
  })

  it("refuses every token with one character changed (header, payload or signature)", async () => {
    const token = await valid({ companyId: "org_1" })
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.nat(), async (i, c) => {
        const index = i % token.length
        fc.pre(token[index] !== ".")
        const replacement = alphabet.replace(token[index]!, "")[c % (alphabet.length - 1)]!
        const mutated = token.slice(0, index) + replacement + token.slice(index + 1)
        await refused(mutated)
      }),
      { numRuns: 300 }
    )
  })

  it("refuses every replacement of the last signature character, including ones that decode to the same bytes", async () => {
    const token = await valid()
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    for (const c of alphabet.replace(token.at(-1)!, "")) await refused(token.slice(0, -1) + c)
  })

  it("refuses alg none, other HMAC sizes and asymmetric algorithms", async () => {
    await refused(
      new UnsecuredJWT({})
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject("ada@example.com")
        .setIssuedAt(now)
        .setExpirationTime(now + 60)
        .encode()
    )
    for (const alg of ["HS384", "HS512"] as const) {
      const token = await new SignJWT({})
        .setProtectedHeader({ alg })
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject("ada@example.com")
        .setIssuedAt(now)
        .setExpirationTime(now + 60)
        .sign(encoder.encode(key))
      await refused(token)
    }
    for (const alg of ["RS256", "ES256"] as const) {
      const pair = await generateKeyPair(alg)
      void (await exportJWK(pair.publicKey))
      const token = await new SignJWT({})
        .setProtectedHeader({ alg })
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject("ada@example.com")
        .setIssuedAt(now)
        .setExpirationTime(now + 60)
        .sign(pair.privateKey)
      await refused(token)
    }
  })

  it("refuses an unknown crit header, even when correctly signed", async () => {
    // Signed by hand: jose will not even sign a header with an extension it does not know.
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")
    const input = `${part({ alg: "HS256", crit: ["x-unknown"], "x-unknown": true })}.${part({
      iss: issuer,
      aud: audience,
      sub: "ada@example.com",
      iat: now,
      exp: now + 60
    })}`
    const signature = createHmac("sha256", key).update(input).digest("base64url")
    await refused(`${input}.${signature}`)
    // The same hand-made token without crit is accepted, so the refusal above is about crit alone.
    const plain = `${part({ alg: "HS256" })}.${input.split(".")[1]}`
    assert.isTrue(
      Exit.isSuccess(await check(`${plain}.${createHmac("sha256", key).update(plain).digest("base64url")}`))
    )
  })

  it("refuses wrong lifetime, missing times, expiry, issuer, audience, subject and key", async () => {
    await refused(await valid({}, now, now + 301))
    await refused(await valid({}, now, now))
    await refused(await valid({}, now - 400, now - 1))
    await refused(await valid({}, now - 300, now), {})
    await refused(await valid(), { issuer: "someone-else" })
    await refused(await valid(), { audience: "tasks" })
    await refused(await valid(), { key: "another-key" })
    await refused(await valid(), { key: "" })
    // Hand-made tokens, each otherwise valid, missing one requirement.
    const build = (set: (jwt: SignJWT) => SignJWT) =>
      set(new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setIssuer(issuer).setAudience(audience)).sign(
        encoder.encode(key)
      )
    await refused(await build((jwt) => jwt.setSubject("ada@example.com").setExpirationTime(now + 60)))
    await refused(await build((jwt) => jwt.setSubject("ada@example.com").setIssuedAt(now)))
    await refused(
      await build((jwt) =>
        jwt
          .setSubject("ada")
          .setIssuedAt(now)
          .setExpirationTime(now + 60)
      )
    )
    assert.isTrue(
      Exit.isSuccess(
        await check(
          await build((jwt) =>
            jwt
              .setSubject("ada@example.com")
              .setIssuedAt(now)
              .setExpirationTime(now + 60)
          )
        )
      ),
      "the same construction with every requirement met is accepted"
    )
    await refused("")
    await refused("not.a.token")
  })

  it("accepts a token at any moment of its life and refuses it from its expiry on", async () => {
    const token = await valid({}, now, now + 120)
    for (const at of [now, now + 60, now + 119]) assert.isTrue(Exit.isSuccess(await check(token, { nowSeconds: at })))
    for (const at of [now + 120, now + 121, now + 10_000]) await refused(token, { nowSeconds: at })
  })
})
