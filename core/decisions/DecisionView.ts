import type { Decision } from "./Decision.ts"
import { actionView } from "./DecisionAction.ts"
import { quorumView } from "./Quorum.ts"
import type { Routing } from "./Routing.ts"

/**
 * A decision as the contract shows it (Without the internal version,
 * with `routing` where the answer carries it, and with `actions` as DecisionActionViews (names, never
 * values) on the answers that carry them (detail, choose, decline, route, retry; webhook bodies), and with a
 * quorum's tally.
 */
export const publicDecision = (
  decision: Decision,
  options: { readonly routing?: Routing | undefined; readonly actions?: boolean } = {}
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
    ...(options.actions === true ? { actions: (actions ?? []).map(actionView) } : {})
  }
}
