/** The local stand-in of Airtable's Web API: see test/fakes/airtable/Server.ts. */
export {
  type AirtableStandIn,
  busiest,
  type Fault,
  newBaseId,
  type SeedField,
  type SeedTable,
  type StandInOptions,
  type StandInRequest,
  startAirtableStandIn
} from "./airtable/Server.ts"
export type { StandInRecord, StandInTable } from "./airtable/Bases.ts"
