import type { SchemaAST } from "effect"

/** Validation answers name every bad field, not only the first. */
export const reportAllIssues: SchemaAST.ParseOptions = { errors: "all" }
