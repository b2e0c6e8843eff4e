import type { Decision } from "./Decision.ts"
import { actionView } from "./DecisionAction.ts"
import { decisionLink } from "./DecisionNotifications.ts"
import { quorumView } from "./Quorum.ts"
import type { Routing } from "./Routing.ts"

/** The absolute address of a decision's page in the workspace at `workspace`. */
export const decisionPageUrl = (workspace: string, decisionId: string): string =>
  `${workspace.replace(/\/+$/, "")}${decisionLink(decisionId)}`

/**
 * A decision as the contract shows it: without the internal version, with `routing` where the answer carries
 * it, with `actions` as DecisionActionViews (names, never values) on the answers that carry them (detail,
 * choose, decline, route, retry; webhook bodies), with a quorum's tally, and with its page's `url` when the
 * workspace's address is given.
 */
export const publicDecision = (
  decision: Decision,
  options: {
    readonly routing?: Routing | undefined
    readonly actions?: boolean
    readonly workspace?: string | undefined
  } = {}
) => {
  const { version: _version, actions, quorum, ...shown } = decision
  return {
    ...shown,
    ...(quorum === undefined
      ? {}
      : {
          quorum: quorumView(
            quorum,
            decision.options.map((o) => o.id)
          )
        }),
    ...(options.routing === undefined ? {} : { routing: options.routing }),
    ...(options.actions === true ? { actions: (actions ?? []).map(actionView) } : {}),
    ...(options.workspace === undefined ? {} : { url: decisionPageUrl(options.workspace, decision.id) })
  }
}
