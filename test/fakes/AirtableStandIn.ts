/** The local stand-in of Airtable's Web API: see test/fakes/airtable/Server.ts. */
export {
  type AirtableStandIn,
  busiest,
  newBaseId,
  type StandInOptions,
  startAirtableStandIn
} from "./airtable/Server.ts"
