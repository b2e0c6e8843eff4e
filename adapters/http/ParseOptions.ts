import type { SchemaAST } from "effect"

/** Validation answers name every bad field, not only the first (issue 2: `details` naming each bad field). */
export const reportAllIssues: SchemaAST.ParseOptions = { errors: "all" }
