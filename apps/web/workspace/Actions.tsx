import { createContext } from "preact"
import { useContext, useRef, useState } from "preact/hooks"
import { newIdempotencyKey, postData } from "../shared/api.ts"
import type { ActionAnswer } from "./types.ts"

/** What a page gives its blocks: where their actions go, and what to do once one is done. */
export interface ActionTarget {
  readonly serviceId: string
  readonly done: (answer: ActionAnswer) => void
}

export const ActionContext = createContext<ActionTarget | undefined>(undefined)

const actionPath = (serviceId: string, actionId: string) =>
  `/api/v1/workspace/apps/${encodeURIComponent(serviceId)}/actions/${encodeURIComponent(actionId)}`

interface Attempt {
  readonly actionId: string
  readonly values: Record<string, string>
  readonly key: string
}

/**
 * Runs a page's actions. Every click is a new attempt with a fresh Idempotency-Key; "Try again" after a
 * failure sends the same attempt with the same key, so an action that did reach the service is applied once.
 */
export const useAction = () => {
  const target = useContext(ActionContext)
  const last = useRef<Attempt | undefined>(undefined)
  const [pending, setPending] = useState(false)
  const [error, setError] = useState<unknown>(undefined)

  /** Answers whether the action was done. */
  const send = async (attempt: Attempt): Promise<boolean> => {
    if (target === undefined) return false
    last.current = attempt
    setPending(true)
    setError(undefined)
    try {
      const answer = await postData<ActionAnswer>(
        actionPath(target.serviceId, attempt.actionId),
        attempt.values,
        attempt.key
      )
      last.current = undefined
      setPending(false)
      target.done(answer ?? {})
      return true
    } catch (failure) {
      setPending(false)
      setError(failure)
      return false
    }
  }

  return {
    pending,
    error,
    run: (actionId: string, values: Record<string, string> = {}) =>
      send({ actionId, values, key: newIdempotencyKey() }),
    retry: () => (last.current !== undefined ? send(last.current) : Promise.resolve(false)),
    dismiss: () => {
      last.current = undefined
      setError(undefined)
    }
  }
}
