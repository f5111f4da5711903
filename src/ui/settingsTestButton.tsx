/**
 * The Test connection button under the planner URL in the Settings Editor: it runs
 * `notebook-bcc:test-connection` (its result is that command's notification) once the form has saved
 * the URL shown. Not loaded at startup: `settingsTestField.tsx` imports it with `import()` the first time
 * the Settings Editor shows the field, so webpack makes it a chunk of its own.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { Button } from '@jupyterlab/ui-components';
import type { CommandRegistry } from '@lumino/commands';
import type { ISignal } from '@lumino/signaling';
import * as React from 'react';
import { CommandIDs } from '../tokens';

/** What the settings editor gives the form as `formContext.settings` (a `Settings`), as far as read here. */
export interface ISavedSettings {
  readonly composite: Readonly<Record<string, unknown>>;
  readonly changed: ISignal<unknown, unknown>;
}

const TEST = CommandIDs.testConnection;

/** How long a test waits for the form to save the URL just typed (the form saves after a pause). */
const SAVE_WAIT_MS = 3000;

/** Resolves once `settings` holds `value` as `name` (the form saved it), or after a while. */
export function whenSaved(
  settings: ISavedSettings | null,
  name: string,
  value: unknown,
  waitMs = SAVE_WAIT_MS
): Promise<void> {
  if (!settings || settings.composite[name] === value) {
    return Promise.resolve();
  }
  return new Promise(resolve => {
    const done = () => {
      clearTimeout(timer);
      settings.changed.disconnect(check);
      // The run settings follow the same change in the same turn: let them read it first.
      setTimeout(resolve, 0);
    };
    const check = () => {
      if (settings.composite[name] === value) {
        done();
      }
    };
    const timer = setTimeout(done, waitMs);
    settings.changed.connect(check);
  });
}

const ROW: React.CSSProperties = { flexBasis: '100%', padding: '4px 0' };

export type TestState = 'idle' | 'testing' | 'ok' | 'failed';

/** The button and a line that says what came of the last test. */
export function TestConnectionButton(props: {
  commands: CommandRegistry;
  trans: TranslationBundle;
  /** Waits for the URL shown to be the one in use. */
  beforeTest: () => Promise<void>;
}): JSX.Element {
  const { commands, trans, beforeTest } = props;
  const [enabled, setEnabled] = React.useState(() => commands.isEnabled(TEST));
  const [state, setState] = React.useState<TestState>('idle');
  React.useEffect(() => {
    const update = (
      _: unknown,
      change: CommandRegistry.ICommandChangedArgs
    ) => {
      if (change.id === TEST || change.id === undefined) {
        setEnabled(commands.isEnabled(TEST));
      }
    };
    commands.commandChanged.connect(update);
    return () => {
      commands.commandChanged.disconnect(update);
    };
  }, [commands]);
  const test = async () => {
    setState('testing');
    try {
      await beforeTest();
      const ok = await commands.execute(TEST);
      setState(ok === true ? 'ok' : 'failed');
    } catch (reason) {
      console.error('Notebook-BCC: the connection test failed.', reason);
      setState('failed');
    }
  };
  const note = !enabled
    ? trans.__('Open a notebook to test the planner its runs use.')
    : state === 'testing'
      ? trans.__('Testing…')
      : state === 'ok'
        ? trans.__('The planner answered.')
        : state === 'failed'
          ? trans.__('The planner did not answer: see the notification.')
          : '';
  return (
    // Laid out as a row of the form: the whole width, under the URL, aligned with its label.
    <div className="jp-bcc-settings-test" style={ROW}>
      <Button
        className={`jp-mod-styled ${enabled ? 'jp-mod-accept' : 'jp-mod-reject'}`}
        small
        disabled={!enabled || state === 'testing'}
        title={commands.caption(TEST)}
        onClick={() => void test()}
      >
        {trans.__('Test connection')}
      </Button>{' '}
      <span
        className="jp-bcc-settings-test-result"
        role="status"
        data-state={enabled ? state : 'disabled'}
      >
        {note}
      </span>
    </div>
  );
}
