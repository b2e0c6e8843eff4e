import { Result, Schema } from "effect"
import { Decisions } from "./Limits.ts"
import { ValidationError } from "./Errors.ts"
import { queryIssue } from "./FieldIssue.ts"

/**
 * Cursor paging. A cursor is an opaque base64url token holding the sort key of the last item served;
 * the next page starts strictly after it. Lists fetch `limit + 1` rows to know whether more remain.
 */
export type CursorKey = ReadonlyArray<string | number>

export const encodeCursor = (key: CursorKey): string => Buffer.from(JSON.stringify(key), "utf8").toString("base64url")

const KeyArray = Schema.Array(Schema.Union([Schema.String, Schema.Number]))
const decodeKey = Schema.decodeUnknownResult(Schema.fromJsonString(KeyArray))

export const decodeCursor = (cursor: string): Result.Result<CursorKey, ValidationError> => {
  const invalid = new ValidationError({
    message: "The cursor is not valid.",
    details: [queryIssue("cursor", "is not a cursor this list returned")]
  })
  if (cursor.length === 0 || cursor.length > 512 || !/^[A-Za-z0-9_-]+$/.test(cursor)) return Result.fail(invalid)
  return Result.mapError(decodeKey(Buffer.from(cursor, "base64url").toString("utf8")), () => invalid)
}

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly nextCursor: string | undefined
}

/** Cuts `limit + 1` fetched rows into a page; the cursor names the last row kept. */
export const toPage = <A>(rows: ReadonlyArray<A>, limit: number, keyOf: (a: A) => CursorKey): Page<A> => {
  if (rows.length <= limit) return { items: rows, nextCursor: undefined }
  const items = rows.slice(0, limit)
  return { items, nextCursor: encodeCursor(keyOf(items[items.length - 1]!)) }
}

/** Query parameter `limit`: an integer 1 to 100, default 25. */
export const PageLimit = Schema.Int.check(
  Schema.isBetween({ minimum: Decisions.pageSizeMin, maximum: Decisions.pageSizeMax })
)

export const defaultPageLimit = Decisions.pageSizeDefault
