import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { Signal } from '@lumino/signaling';
import * as React from 'react';
import { CommandIDs } from '../../tokens';
import { TestConnectionButton, whenSaved } from '../settingsTestButton';
import { plannerUrlField } from '../settingsTestField';
import { disposeRendered, render, waitFor } from './rendered';

const trans = nullTranslator.load('notebook_bcc');

afterEach(disposeRendered);

/** The test command as the commands plugin adds it: enabled with a notebook, answering ok or not. */
function testCommand(answer: { ok: boolean; enabled: boolean }) {
  const commands = new CommandRegistry();
  const execute = jest.fn(async () => answer.ok);
  commands.addCommand(CommandIDs.testConnection, {
    label: 'Test Planner Connection',
    caption: "Check that this notebook's planner answers",
    isEnabled: () => answer.enabled,
    execute
  });
  return { commands, execute };
}

describe('TestConnectionButton', () => {
  it('runs the test command once the URL is saved, and says the planner answered', async () => {
    const answer = { ok: true, enabled: true };
    const { commands, execute } = testCommand(answer);
    const order: string[] = [];
    const host = await render(
      <TestConnectionButton
        commands={commands}
        trans={trans}
        beforeTest={async () => {
          order.push('saved');
        }}
      />
    );
    execute.mockImplementation(async () => {
      order.push('tested');
      return answer.ok;
    });
    const button = host.querySelector('button')!;
    expect(button.textContent).toBe('Test connection');
    expect(button.title).toBe("Check that this notebook's planner answers");
    button.click();
    const result = host.querySelector('.jp-bcc-settings-test-result')!;
    await waitFor(() => result.getAttribute('data-state') === 'ok');
    expect(result.textContent).toBe('The planner answered.');
    expect(order).toEqual(['saved', 'tested']);
  });

  it('says the planner did not answer when the test fails (the command shows why)', async () => {
    const { commands } = testCommand({ ok: false, enabled: true });
    const host = await render(
      <TestConnectionButton
        commands={commands}
        trans={trans}
        beforeTest={async () => undefined}
      />
    );
    host.querySelector('button')!.click();
    const result = host.querySelector('.jp-bcc-settings-test-result')!;
    await waitFor(() => result.getAttribute('data-state') === 'failed');
    expect(result.textContent).toBe(
      'The planner did not answer: see the notification.'
    );
  });

  it('is disabled without a notebook, says why, and is enabled once the command is', async () => {
    const answer = { ok: true, enabled: false };
    const { commands } = testCommand(answer);
    const host = await render(
      <TestConnectionButton
        commands={commands}
        trans={trans}
        beforeTest={async () => undefined}
      />
    );
    const button = host.querySelector('button')!;
    expect(button.disabled).toBe(true);
    expect(host.textContent).toContain(
      'Open a notebook to test the planner its runs use.'
    );
    answer.enabled = true;
    commands.notifyCommandChanged(CommandIDs.testConnection);
    await waitFor(() => !button.disabled);
    expect(host.textContent).not.toContain('Open a notebook');
  });
});

function fakeSettings(baseUrl: string) {
  const owner = {};
  const changed = new Signal<object, void>(owner);
  const settings = {
    composite: { baseUrl } as Record<string, unknown>,
    changed
  };
  return {
    settings,
    save: (value: string) => {
      settings.composite = { baseUrl: value };
      changed.emit();
    }
  };
}

describe('whenSaved', () => {
  it('goes on at once when the URL shown is the one saved', async () => {
    const { settings } = fakeSettings('http://a');
    await expect(
      whenSaved(settings, 'baseUrl', 'http://a', 10_000)
    ).resolves.toBeUndefined();
  });

  it('waits for the form to save the URL just typed', async () => {
    const { settings, save } = fakeSettings('http://a');
    let done = false;
    const waiting = whenSaved(settings, 'baseUrl', 'http://b', 10_000).then(
      () => (done = true)
    );
    save('http://a/other');
    await new Promise(resolve => setTimeout(resolve, 20));
    expect(done).toBe(false);
    save('http://b');
    await waiting;
    expect(done).toBe(true);
  });

  it('gives up waiting after a while (the test then uses what is saved)', async () => {
    const { settings } = fakeSettings('http://a');
    const start = Date.now();
    await whenSaved(settings, 'baseUrl', 'http://never', 50);
    expect(Date.now() - start).toBeGreaterThanOrEqual(45);
  });
});

describe('plannerUrlField', () => {
  it("shows the label and the form's own field at once, then the Test connection button, which waits for the URL shown to be saved", async () => {
    const answer = { ok: true, enabled: true };
    const { commands, execute } = testCommand(answer);
    const { settings, save } = fakeSettings('http://a');
    const Field = plannerUrlField(commands, trans);
    const StringField = (props: { formData?: unknown }) => (
      <input className="form-field" defaultValue={String(props.formData)} />
    );
    const props = {
      name: 'baseUrl',
      formData: 'http://b',
      schema: { title: 'Planner URL' },
      registry: { fields: { StringField } },
      formContext: { settings }
    } as unknown as React.ComponentProps<typeof Field>;
    const host = await render(<Field {...props} />);
    expect(host.querySelector('.jp-FormGroup-fieldLabel')!.textContent).toBe(
      'Planner URL'
    );
    expect(
      host.querySelector<HTMLInputElement>('input.form-field')!.value
    ).toBe('http://b');
    await waitFor(() => host.querySelector('button') !== null);
    const button = host.querySelector('button')!;
    expect(button.textContent).toBe('Test connection');
    button.click();
    await new Promise(resolve => setTimeout(resolve, 20));
    expect(execute).not.toHaveBeenCalled();
    save('http://b');
    const result = host.querySelector('.jp-bcc-settings-test-result')!;
    await waitFor(() => result.getAttribute('data-state') === 'ok');
    expect(execute).toHaveBeenCalledTimes(1);
  });
});
