/**
 * The `v1` dialect: the public Easy-notebook DSLC server: `/v1/actions` streams one behavior,
 * `/v1/reflection` says whether the step is done, the server's `state` is its only memory
 * (docs/dialects.md#v1).
 */
import { defineDialect, timedTransport } from '../dialect';
import { V1Adapter } from './adapter';
import { v1Probe } from './probe';
import { readV1Saved, V1_ENTRY_STAGE_ID, V1_ENTRY_STEP_ID } from './state';

/** The v1 settings (schema/plugin.json): the server's fixed entry point, run first without a template. */
export interface IV1Settings {
  entryStageId: string;
  entryStepId: string;
}

const DEFAULTS = {
  v1EntryStage: V1_ENTRY_STAGE_ID,
  v1EntryStep: V1_ENTRY_STEP_ID
};

/** A setting's text, trimmed; empty or not text: the default. */
function entryPoint(value: unknown, fallback: string): string {
  return (typeof value === 'string' ? value.trim() : '') || fallback;
}

export const v1 = defineDialect({
  name: 'v1',
  testDouble: 'v1',
  probe: v1Probe,
  settings: {
    defaults: DEFAULTS,
    read: (composite): IV1Settings => ({
      entryStageId: entryPoint(composite.v1EntryStage, DEFAULTS.v1EntryStage),
      entryStepId: entryPoint(composite.v1EntryStep, DEFAULTS.v1EntryStep)
    })
  },
  createAdapter(context, settings) {
    const adapter = new V1Adapter({
      ...settings,
      transport: timedTransport(context),
      log: context.log
    });
    return () => adapter;
  },
  savedState: { read: readV1Saved }
});
