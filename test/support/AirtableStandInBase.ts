import type { AirtableTable } from "../../adapters/airtable/AirtableFields.ts"

/**
 * Makes the tables of a field map in an empty base of a stand-in, through the metadata API as a user's setup
 * would: every table with its other fields first, then the link fields (tasks and proposals link both ways).
 */
export const provisionBase = async (
  url: string,
  token: string,
  baseId: string,
  tables: ReadonlyArray<AirtableTable>
): Promise<void> => {
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${url}/v0/meta/bases/${baseId}/${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    const answer = (await response.json()) as { readonly id?: string }
    if (!response.ok) throw new Error(`provisioning ${path}: ${response.status} ${JSON.stringify(answer)}`)
    return answer
  }
  const ids = new Map<string, string>()
  for (const table of tables) {
    const fields = table.fields
      .filter((field) => field.type !== "multipleRecordLinks")
      .map((field) => ({
        name: field.name,
        type: field.type,
        ...(field.options === undefined ? {} : { options: field.options })
      }))
    const created = await post("tables", { name: table.name, fields })
    ids.set(table.table, created.id!)
  }
  for (const table of tables) {
    for (const field of table.fields) {
      if (field.options === undefined || !("linkedTable" in field.options)) continue
      await post(`tables/${ids.get(table.table)!}/fields`, {
        name: field.name,
        type: field.type,
        options: { linkedTableId: ids.get(field.options.linkedTable)! }
      })
    }
  }
}
