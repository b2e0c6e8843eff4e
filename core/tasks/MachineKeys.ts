import { Result } from "effect"
import { isEmail, normalizeEmail } from "../kernel/Email.ts"

/** An operator's machine key: `key:email:Name`. */
export interface MachineKey {
  readonly key: string
  readonly email: string
  readonly name: string
}

/**
 * Comma-separated `key:email:Name` entries; the name may itself hold colons. An entry without a key, a valid
 * email or a name is refused (with its position, never its key), so a typo cannot open a hole.
 */
export const parseMachineKeys = (text: string): Result.Result<ReadonlyArray<MachineKey>, string> => {
  const keys: Array<MachineKey> = []
  const entries = text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0)
  for (const [index, entry] of entries.entries()) {
    const [key, email, ...rest] = entry.split(":")
    const name = rest.join(":").trim()
    if (key === undefined || key.trim().length < 16 || email === undefined || !isEmail(email.trim()) || name === "") {
      return Result.fail(`machine key entry ${index + 1} must be key:email:Name with a key of 16 characters or more`)
    }
    keys.push({ key: key.trim(), email: normalizeEmail(email), name })
  }
  return Result.succeed(keys)
}
