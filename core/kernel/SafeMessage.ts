import { ErrorTaxonomy, type ErrorCode } from "./ErrorCode.ts"

/**
 * Messages are safe to show an end user. This is the last guard before a message
 * leaves the platform: anything that looks like a stack frame, a file path, an environment variable
 * name or a vendor name is replaced by the code's generic message.
 */
const stackFrame = /\n\s+at\s|\bat\s+\S+\s+\(|\bat\s+(file|node):/
const filePath = /(^|[\s(:"'])(\/[\w.-]+){2,}|[A-Za-z]:\\[\w\\.-]+|\bfile:\/\/|\bnode:[a-z]/
const envVariable = /\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b/
const vendors =
  /\b(postgres(ql)?|pglite|pg_|sql(state)?|airtable|node\.?js|undici|jose|vitest|ECONN\w*|ETIMEDOUT|ENOTFOUND|EPIPE)\b/i

/** Taxonomy codes are upper snake case themselves; they are not environment variable names. */
const stripCodes = (message: string): string =>
  message.replace(/\b[A-Za-z_]+\b/g, (word) => (Object.hasOwn(ErrorTaxonomy, word) ? "" : word))

export const isUserSafe = (message: string): boolean => {
  if (message.length === 0 || message.length > 2000) return false
  const text = stripCodes(message)
  return !(stackFrame.test(text) || filePath.test(text) || envVariable.test(text) || vendors.test(text))
}

export const safeMessage = (code: ErrorCode, message: string | undefined): string =>
  message !== undefined && isUserSafe(message) ? message : ErrorTaxonomy[code].message
