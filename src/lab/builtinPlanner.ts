/**
 * The built-in demo planner: the reference planner's own code, run in this page, for a user who has not
 * configured a planner yet (docs/architecture.md#demo-planner). Its module is loaded on first use, so a
 * page that never runs the demo never downloads it.
 */
import type { IPlannerRequest, IPlannerTransport } from '../protocol';
import { say } from '../protocol/messages';

/** Shown where the planner's URL would be. */
export const BUILTIN_LABEL = say('builtinLabel');

let loading: Promise<IPlannerTransport> | null = null;

/** One planner per page: it keeps each notebook's session between requests. */
export function loadBuiltinPlanner(): Promise<IPlannerTransport> {
  if (!loading) {
    loading = import('../referencePlanner/transport').then(module =>
      module.createBuiltinPlannerTransport()
    );
    // A failed load (e.g. the chunk could not be fetched) is tried again at the next request.
    loading.catch(() => (loading = null));
  }
  return loading;
}

/**
 * A transport decided at the first request (e.g. after asking the server whether a planner is
 * configured) and kept for the rest of its life. `label` names the choice once it is made.
 */
export function deferredTransport(
  choose: () => Promise<IPlannerTransport>,
  initial: Pick<IPlannerTransport, 'label' | 'labelText' | 'urlOf'>
): IPlannerTransport {
  let chosen: Promise<IPlannerTransport> | null = null;
  let settled: IPlannerTransport | null = null;
  const pick = (): Promise<IPlannerTransport> => {
    if (!chosen) {
      chosen = choose().then(transport => (settled = transport));
      chosen.catch(() => (chosen = null));
    }
    return chosen;
  };
  return {
    get label() {
      return (settled ?? initial).label;
    },
    get labelText() {
      return (settled ?? initial).labelText;
    },
    urlOf: path => (settled ?? initial).urlOf(path),
    send: async (request: IPlannerRequest) => (await pick()).send(request)
  };
}
