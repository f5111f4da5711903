/**
 * The `dslc` dialect, the seed (docs/protocol.md): `/planning` (JSON) and `/generating` (NDJSON),
 * spoken by the reference planner service itself.
 */
import { defineDialect } from '../dialect';
import { DslcAdapter } from './adapter';
import { dslcProbe } from './probe';

export const dslc = defineDialect({
  name: 'dslc',
  testDouble: 'dslc',
  probe: dslcProbe,
  settings: { defaults: {}, read: () => ({}) },
  /**
   * The adapter keeps nothing between requests: it is rebuilt when the notebook id or a timeout
   * changes, so they apply to the next request.
   */
  createAdapter(context) {
    let current: DslcAdapter | null = null;
    let built = '';
    return () => {
      const options = {
        notebookId: context.notebookId?.() ?? '',
        ...context.timeouts?.()
      };
      const key = JSON.stringify(options);
      if (!current || key !== built) {
        built = key;
        current = new DslcAdapter({
          ...options,
          transport: context.transport,
          observer: context.observer
        });
      }
      return current;
    };
  },
  /** It saves nothing with the run. */
  savedState: { read: () => null }
});
