export * as IdentityToken from "./IdentityToken.ts"
export * from "./IssuedSecret.ts"
export * as Signature from "./Signature.ts"
export * from "./StaticKey.ts"
