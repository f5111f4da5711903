/**
 * The `bcc` dialect: the server the Notebook-BCC Python client was written against: XML planning
 * answers, the context in a sibling `state`, reflections on `/reflecting` (docs/dialects.md#bcc).
 */
import { defineDialect, timedTransport } from '../dialect';
import { BccAdapter } from './adapter';
import { bccProbe } from './probe';
import { readBccSaved } from './state';

export const bcc = defineDialect({
  name: 'bcc',
  testDouble: 'bcc',
  probe: bccProbe,
  settings: { defaults: {}, read: () => ({}) },
  createAdapter(context) {
    const adapter = new BccAdapter({
      transport: timedTransport(context),
      notebookId: context.notebookId?.(),
      log: context.log
    });
    return () => adapter;
  },
  savedState: { read: readBccSaved }
});
