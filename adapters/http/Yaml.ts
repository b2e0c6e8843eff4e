/**
 * A YAML 1.2 emitter for JSON values (the OpenAPI document). Scalars are written in JSON form, which YAML
 * reads as the same values; maps and sequences use block style.
 */
export const toYaml = (value: unknown): string => `${emit(value, 0)}\n`

const pad = (depth: number) => "  ".repeat(depth)

const scalar = (value: unknown): string => {
  if (value === null || value === undefined) return "null"
  if (typeof value === "string") return JSON.stringify(value)
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : "null"
  return String(value)
}

const isContainer = (value: unknown): value is object => typeof value === "object" && value !== null

const emit = (value: unknown, depth: number): string => {
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]"
    return value
      .map((item) => {
        if (isContainer(item) && !isEmpty(item)) {
          const inner = emit(item, depth + 1).trimStart()
          return `${pad(depth)}- ${inner}`
        }
        return `${pad(depth)}- ${isContainer(item) ? emit(item, depth + 1) : scalar(item)}`
      })
      .join("\n")
  }
  if (isContainer(value)) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined)
    if (entries.length === 0) return "{}"
    return entries
      .map(([key, v]) => {
        const k = JSON.stringify(key)
        if (isContainer(v) && !isEmpty(v)) return `${pad(depth)}${k}:\n${emit(v, depth + 1)}`
        return `${pad(depth)}${k}: ${isContainer(v) ? emit(v, depth + 1) : scalar(v)}`
      })
      .join("\n")
  }
  return scalar(value)
}

const isEmpty = (value: object) => (Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0)
