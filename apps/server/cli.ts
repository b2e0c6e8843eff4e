import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Effect } from "effect"
import { Command } from "effect/cli"
import { cli, OperatorLive } from "./CliProgram.ts"

/** `npm run cli -- <command> [flags]`; `npm run cli -- --help` lists the commands. */
Command.run(cli, { version: "0.1.0" }).pipe(Effect.provide([OperatorLive, NodeServices.layer]), NodeRuntime.runMain)
