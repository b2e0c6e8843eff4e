import { Schema } from "effect"

export const rootRelativePathMaxLength = 512

const probe = "http://root-relative.invalid"

/**
 * A path of the site's own origin, where a person may be sent after signing in: it starts with one `/`,
 * holds no backslash, white space or control character, and resolves on the same origin. Anything else (an
 * absolute URL, `//host`, `/\host`, a scheme) would be an open redirect.
 */
export const isRootRelativePath = (value: string): boolean => {
  if (value.length < 1 || value.length > rootRelativePathMaxLength) return false
  if (!value.startsWith("/") || value.startsWith("//")) return false
  if (/[\\\s\u0000-\u001f\u007f-\u009f]/.test(value)) return false
  try {
    return new URL(value, probe).origin === probe
  } catch {
    return false
  }
}

export const RootRelativePath = Schema.String.check(
  Schema.makeFilter(
    (value: string) =>
      isRootRelativePath(value) ||
      `must be a path on this site starting with a single "/" (at most ${rootRelativePathMaxLength} characters, no spaces or backslashes)`
  )
).annotate({ title: "RootRelativePath" })
