import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import * as fc from "fast-check"
import { createHmac } from "node:crypto"
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT, UnsecuredJWT } from "jose"
import { mint, verify, type VerifiedIdentity } from "../../core/auth/IdentityToken.ts"
import { Unauthorized } from "../../core/kernel/Errors.ts"

const key = "embed-key-0123456789-abcdefghijklmnop"
const issuer = "platform-hub"
const audience = "decisions"
const now = 1_800_000_000
const encoder = new TextEncoder()
const base64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

type Overrides = Partial<{ key: string; issuer: string; audience: string; nowSeconds: number }>

const check = (token: string, overrides: Overrides = {}) =>
  verify({ token, key, issuer, audience, nowSeconds: now, ...overrides })

const accepted = (token: string, overrides?: Overrides): Promise<VerifiedIdentity> =>
  Effect.runPromise(check(token, overrides))

/** The token must be refused, and with the one Unauthorized every refusal shares. */
const refused = async (token: string, overrides?: Overrides, label = token) => {
  const exit = await Effect.runPromiseExit(check(token, overrides))
  assert.isTrue(Exit.isFailure(exit), `must be refused: ${label}`)
  if (Exit.isFailure(exit)) {
    const error = Cause.squash(exit.cause)
    assert.instanceOf(error, Unauthorized, label)
  }
}

/** An otherwise valid token, HS256 unless told; `edit` removes or changes one thing. */
const build = (
  edit: (jwt: SignJWT) => SignJWT = (jwt) => jwt,
  options: { readonly key?: string; readonly alg?: string } = {}
) =>
  edit(
    new SignJWT({ companyId: "org_1" })
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject("ada@example.com")
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
  )
    .setProtectedHeader({ alg: options.alg ?? "HS256", typ: "JWT" })
    .sign(encoder.encode(options.key ?? key))

/** A token assembled by hand, signed with HMAC-SHA256 over whatever header and payload it is given. */
const handMade = (header: Record<string, unknown>, payload: Record<string, unknown>) => {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")
  const input = `${part(header)}.${part(payload)}`
  return `${input}.${createHmac("sha256", key).update(input).digest("base64url")}`
}

const claims = { iss: issuer, aud: audience, sub: "ada@example.com", iat: now, exp: now + 60 }

const replaceAt = (text: string, index: number, replacement: string) =>
  text.slice(0, index) + replacement + text.slice(index + 1)

// Emails the kernel accepts, written with any case and surrounding spaces.
const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/)
const emailArb = fc
  .tuple(fc.stringMatching(/^[a-z0-9._+-]{1,20}$/), fc.array(label, { minLength: 1, maxLength: 3 }), label)
  .map(([local, domain, tld]) => `${local}@${[...domain, tld].join(".")}`)
const paddedArb = (email: fc.Arbitrary<string>) =>
  fc
    .tuple(fc.mixedCase(email), fc.constantFrom("", " ", "  ", "\t"), fc.constantFrom("", " ", "\n"))
    .map(([e, before, after]) => before + e + after)

describe("AUTH-4 identity tokens (property)", () => {
  it("mint then verify round-trips: subject normalised, companyId, orgRole and tier kept, alive for its lifetime", async () => {
    await fc.assert(
      fc.asyncProperty(
        paddedArb(emailArb),
        fc.option(fc.string({ minLength: 1, maxLength: 40 }), { nil: undefined }),
        fc.option(fc.constantFrom("OWNER", "ADMIN", "MEMBER"), { nil: undefined }),
        fc.option(fc.constantFrom("free", "pro"), { nil: undefined }),
        fc.integer({ min: 1_000_000_000, max: 4_000_000_000 }),
        fc.integer({ min: 1, max: 300 }),
        async (subject, companyId, orgRole, tier, nowSeconds, lifetimeSeconds) => {
          const token = await Effect.runPromise(
            mint({ key, issuer, audience, subject, companyId, orgRole, tier, nowSeconds, lifetimeSeconds })
          )
          // What the token itself carries: HS256, and the subject already normalised.
          assert.deepStrictEqual(decodeProtectedHeader(token), { alg: "HS256", typ: "JWT" })
          assert.strictEqual(decodeJwt(token).sub, subject.trim().toLowerCase())
          const identity = await accepted(token, { nowSeconds })
          assert.deepStrictEqual(identity, {
            email: subject.trim().toLowerCase(),
            companyId,
            orgRole,
            tier,
            issuedAt: nowSeconds,
            expiresAt: nowSeconds + lifetimeSeconds
          })
          await accepted(token, { nowSeconds: nowSeconds + lifetimeSeconds - 1 })
          await refused(token, { nowSeconds: nowSeconds + lifetimeSeconds })
          await refused(token, { audience: "tasks", nowSeconds })
        }
      ),
      { numRuns: 100 }
    )
  })

  it("mint never makes a token living longer than 300 s", async () => {
    const token = await Effect.runPromise(
      mint({ key, issuer, audience, subject: "ada@example.com", nowSeconds: now, lifetimeSeconds: 3600 })
    )
    const identity = await accepted(token)
    assert.strictEqual(identity.expiresAt - identity.issuedAt, 300)
    const byDefault = await accepted(
      await Effect.runPromise(mint({ key, issuer, audience, subject: "ada@example.com", nowSeconds: now }))
    )
    assert.strictEqual(byDefault.expiresAt - byDefault.issuedAt, 300)
  })

  it("mint refuses, as a defect, to make a token the verifier would refuse", async () => {
    const base = { key, issuer, audience, subject: "ada@example.com", nowSeconds: now }
    for (const input of [
      { ...base, key: "" },
      { ...base, subject: "ada" },
      { ...base, subject: "" },
      { ...base, companyId: "" },
      { ...base, lifetimeSeconds: 0 },
      { ...base, lifetimeSeconds: -5 },
      { ...base, lifetimeSeconds: 1.5 },
      { ...base, nowSeconds: Number.NaN }
    ]) {
      const exit = await Effect.runPromiseExit(mint(input))
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause), JSON.stringify(input))
    }
  })

  it("refuses every token with one character of its header, payload or signature changed", async () => {
    const token = await build()
    await accepted(token)
    // Any other base64url character, and a few that are not base64url at all.
    const alphabet = `${base64url}=+/. `
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: token.length - 1 }), fc.nat(), async (index, pick) => {
        const choices = [...alphabet].filter((c) => c !== token[index])
        await refused(replaceAt(token, index, choices[pick % choices.length]!))
      }),
      { numRuns: 1000 }
    )
  })

  it("refuses a changed last character of each segment, even when it decodes to the very same bytes", async () => {
    const token = await build()
    const segments = token.split(".")
    let sameBytes = 0
    for (const [s, segment] of segments.entries()) {
      for (const c of base64url) {
        if (c === segment.at(-1)) continue
        const mutatedSegment = segment.slice(0, -1) + c
        const mutated = segments.map((original, i) => (i === s ? mutatedSegment : original)).join(".")
        if (Buffer.from(mutatedSegment, "base64url").equals(Buffer.from(segment, "base64url"))) sameBytes++
        await refused(mutated)
      }
    }
    // The signature (32 bytes, 43 characters) leaves 2 unused bits in its last character: such twins exist.
    assert.isAtLeast(sameBytes, 3)
  })

  it("refuses alg none, other HMAC sizes and asymmetric algorithms", async () => {
    await refused(
      new UnsecuredJWT({})
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject("ada@example.com")
        .setIssuedAt(now)
        .setExpirationTime(now + 60)
        .encode(),
      undefined,
      "alg none"
    )
    for (const alg of ["none", "None", "NONE", "hs256", "HS384", "HS512"]) {
      await refused(handMade({ alg, typ: "JWT" }, claims), undefined, alg)
    }
    for (const alg of ["HS384", "HS512"] as const) {
      await refused(await build(undefined, { alg }), undefined, alg)
    }
    for (const alg of ["RS256", "PS256", "ES256"] as const) {
      const pair = await generateKeyPair(alg)
      const token = await new SignJWT({})
        .setProtectedHeader({ alg })
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject("ada@example.com")
        .setIssuedAt(now)
        .setExpirationTime(now + 60)
        .sign(pair.privateKey)
      await refused(token, undefined, alg)
    }
    // The hand-made construction itself is sound: with HS256 it is accepted.
    await accepted(handMade({ alg: "HS256", typ: "JWT" }, claims))
  })

  it("refuses any crit header, even when correctly signed", async () => {
    // Signed by hand: jose will not sign a header with an extension it does not know.
    for (const header of [
      { alg: "HS256", crit: ["x-unknown"], "x-unknown": true },
      { alg: "HS256", crit: ["b64"], b64: true },
      { alg: "HS256", crit: [] },
      { alg: "HS256", crit: ["exp"], exp: now + 60 }
    ]) {
      await refused(handMade(header, claims), undefined, JSON.stringify(header))
    }
  })

  it("refuses a wrong lifetime, missing or misdated times, expiry, issuer, audience, subject and key", async () => {
    const cases: ReadonlyArray<readonly [string, Promise<string>, Overrides?]> = [
      ["lifetime 301 s", build((jwt) => jwt.setExpirationTime(now + 301))],
      ["exp equal to iat", build((jwt) => jwt.setExpirationTime(now))],
      ["exp before iat", build((jwt) => jwt.setIssuedAt(now - 10).setExpirationTime(now - 20))],
      ["expired", build((jwt) => jwt.setIssuedAt(now - 400).setExpirationTime(now - 1))],
      ["expiring now", build((jwt) => jwt.setIssuedAt(now - 300).setExpirationTime(now))],
      ["issued 6 s in the future", build((jwt) => jwt.setIssuedAt(now + 6).setExpirationTime(now + 60))],
      ["issued an hour ahead", build((jwt) => jwt.setIssuedAt(now + 3600).setExpirationTime(now + 3900))],
      ["not yet valid", build((jwt) => jwt.setNotBefore(now + 30))],
      ["wrong issuer", build((jwt) => jwt.setIssuer("someone-else"))],
      ["wrong audience", build((jwt) => jwt.setAudience("tasks"))],
      ["audience list without ours", build((jwt) => jwt.setAudience(["tasks", "hub"]))],
      ["subject not an email", build((jwt) => jwt.setSubject("ada"))],
      ["subject with two @", build((jwt) => jwt.setSubject("ada@b@example.com"))],
      ["another key", build(undefined, { key: "another-key" })],
      ["verified with another key", build(), { key: "another-key" }],
      ["verified with an empty key", build(), { key: "" }],
      ["verified for another issuer", build(), { issuer: "someone-else" }],
      ["verified for another audience", build(), { audience: "tasks" }],
      ["verified at NaN", build(), { nowSeconds: Number.NaN }]
    ]
    for (const [label, token, overrides] of cases) await refused(await token, overrides, label)
  })

  it("refuses hand-made tokens missing a required claim or carrying one of the wrong type", async () => {
    const { iat: _iat, ...withoutIat } = claims
    const { exp: _exp, ...withoutExp } = claims
    const { sub: _sub, ...withoutSub } = claims
    const { iss: _iss, ...withoutIss } = claims
    const { aud: _aud, ...withoutAud } = claims
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
      ["no iat", withoutIat],
      ["no exp", withoutExp],
      ["no sub", withoutSub],
      ["no iss", withoutIss],
      ["no aud", withoutAud],
      ["iat a string", { ...claims, iat: String(now) }],
      ["exp a string", { ...claims, exp: String(now + 60) }],
      ["sub a number", { ...claims, sub: 42 }],
      ["companyId empty", { ...claims, companyId: "" }],
      ["companyId a number", { ...claims, companyId: 42 }],
      ["companyId a list", { ...claims, companyId: ["org_1"] }],
      ["orgRole an object", { ...claims, orgRole: { role: "ADMIN" } }],
      ["tier a boolean", { ...claims, tier: true }]
    ]
    for (const [label, payload] of cases) await refused(handMade({ alg: "HS256" }, payload), undefined, label)
    await accepted(handMade({ alg: "HS256" }, { ...claims, companyId: "org_1", orgRole: "ADMIN", tier: "pro" }))
  })

  it("refuses what is not a compact HS256 JWS", async () => {
    const token = await build()
    const [h, p, s] = token.split(".") as [string, string, string]
    for (const candidate of [
      "",
      ".",
      "..",
      "not.a.token",
      `${h}.${p}`,
      `${h}.${p}.`,
      `${h}..${s}`,
      `.${p}.${s}`,
      `${token}.${s}`,
      `${h}.${p}.${s}=`,
      `${h}.${p}.${Buffer.from(s, "base64url").toString("base64")}`,
      ` ${token}`,
      `${token} `,
      `${h}.${p}.${s}${"A".repeat(8192)}`
    ]) {
      await refused(candidate)
    }
  })

  it("accepts an audience list holding ours, a subject written loosely, and a token issued up to 5 s ahead", async () => {
    assert.strictEqual(
      (await accepted(await build((jwt) => jwt.setAudience(["tasks", audience])))).email,
      "ada@example.com"
    )
    assert.strictEqual(
      (await accepted(await build((jwt) => jwt.setSubject("  Ada@Example.COM ")))).email,
      "ada@example.com"
    )
    await accepted(await build((jwt) => jwt.setIssuedAt(now + 5).setExpirationTime(now + 60)))
    await accepted(await build((jwt) => jwt.setIssuedAt(now - 299).setExpirationTime(now + 1)))
  })

  it("accepts a token at any moment of its life and refuses it from its expiry on", async () => {
    const token = await build((jwt) => jwt.setExpirationTime(now + 120))
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: now - 5, max: now + 100_000 }), async (at) => {
        const exit = await Effect.runPromiseExit(check(token, { nowSeconds: at }))
        assert.strictEqual(Exit.isSuccess(exit), at < now + 120, `at now + ${at - now}`)
      })
    )
  })
})
