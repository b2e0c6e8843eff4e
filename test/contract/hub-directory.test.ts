import { DirectoryMemory } from "../../adapters/memory/hub/DirectoryMemory.ts"
import { DirectorySql } from "../../adapters/sql/hub/DirectorySql.ts"
import { sqlBackends } from "../support/Databases.ts"
import { DirectoryContract } from "./Directory.contract.ts"
import { hubSqlOn } from "./hub-sql-layers.ts"

DirectoryContract("memory", DirectoryMemory)
for (const backend of sqlBackends) DirectoryContract(backend.name, hubSqlOn(DirectorySql, backend))
