import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { Signal } from '@lumino/signaling';
import * as React from 'react';
import { ActionRegistry } from '../../engine/actions/registry';
import type { IEffectsState } from '../../engine/state/effects';
import type { IFsmTransition } from '../../engine/state/fsm';
import { DEFAULT_SETTINGS } from '../../engine/settings';
import { RunTrace } from '../../engine/trace';
import type {
  IRunError,
  IRunFinished,
  IRunSnapshot,
  IRunWarning,
  IWorkflowRunner
} from '../../engine/types';
import { SidebarView } from '../components/SidebarView';
import { RunModel } from '../model';
import { disposeRendered, render, waitFor } from './rendered';
import { snapshot } from './snapshots';

const trans = nullTranslator.load('notebook_bcc');

afterEach(disposeRendered);

/** A runner that never ran, as far as the views read one. */
function idleRunner(): IWorkflowRunner {
  const owner = {};
  return {
    stateChanged: new Signal<object, IFsmTransition>(owner),
    progressChanged: new Signal<object, IRunSnapshot>(owner),
    effectsChanged: new Signal<object, IEffectsState>(owner),
    warning: new Signal<object, IRunWarning>(owner),
    errorOccurred: new Signal<object, IRunError>(owner),
    cellAdded: new Signal<object, never>(owner),
    actionApplied: new Signal<object, never>(owner),
    finished: new Signal<object, IRunFinished>(owner),
    snapshot: snapshot(),
    isRunning: false,
    registry: new ActionRegistry(),
    trace: new RunTrace(),
    effects: { current: [], history: [] }
  } as unknown as IWorkflowRunner;
}

function view(model: RunModel | null, name: string | null) {
  return (
    <SidebarView
      model={model}
      loading={false}
      label={name && `work/${name}`}
      name={name}
      commands={new CommandRegistry()}
      rendermime={{} as IRenderMimeRegistry}
      trans={trans}
    />
  );
}

describe('SidebarView', () => {
  it('shows its header and a hint without a notebook', async () => {
    const host = await render(view(null, null));
    expect(host.querySelector('.jp-bcc-sidebar-title')!.textContent).toBe(
      'Workflow'
    );
    expect(host.querySelector('.jp-bcc-sidebar-empty')!.textContent).toBe(
      'Open a notebook and run a workflow to see its progress here.'
    );
  });

  it("shows the notebook's name at once, and its run once the run's view has loaded", async () => {
    const model = new RunModel({
      runner: idleRunner(),
      saved: { read: () => undefined, changed: new Signal<object, void>({}) },
      readSaved: () => null,
      settings: () => DEFAULT_SETTINGS
    });
    const host = await render(view(model, 'nb.ipynb'));
    expect(host.querySelector('.jp-bcc-notebook-name')!.textContent).toBe(
      'nb.ipynb'
    );
    await waitFor(() => host.querySelector('.jp-bcc-state') !== null);
    const state = host.querySelector('.jp-bcc-state')!;
    expect(state.getAttribute('data-state')).toBe('IDLE');
    expect(state.textContent).toBe('Not started');
  });
});
