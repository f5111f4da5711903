import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import * as React from 'react';
import { CommandIDs } from '../../tokens';
import { PlannerLine } from '../components/PlannerLine';
import { WaitingLine } from '../components/WaitingLine';
import { disposeRendered, render, waitFor } from './rendered';

const trans = nullTranslator.load('notebook_bcc');

afterEach(disposeRendered);

describe('WaitingLine', () => {
  it('ticks the time waited for the planner every second', async () => {
    const since = Date.now() - 71_500;
    const host = await render(<WaitingLine since={since} trans={trans} />);
    const line = host.querySelector('.jp-bcc-waiting');
    expect(line?.textContent).toMatch(
      /^Waiting for the planner… 1 min 1[12] s$/
    );
    await waitFor(() => /1 min 1[3-9] s$/.test(line?.textContent ?? ''));
  });

  it('is a timer a screen reader does not read out every second (the state line says it waits)', async () => {
    const host = await render(<WaitingLine since={Date.now()} trans={trans} />);
    const line = host.querySelector('.jp-bcc-waiting')!;
    // ARIA's timer role: a live region that is off unless asked.
    expect(line.getAttribute('role')).toBe('timer');
    expect(line.getAttribute('aria-live') ?? 'off').toBe('off');
  });
});

describe('PlannerLine', () => {
  it('shows the dialect and where the planner is, and tests the connection', async () => {
    const commands = new CommandRegistry();
    const test = jest.fn();
    commands.addCommand(CommandIDs.testConnection, {
      label: 'Test Planner Connection',
      execute: test
    });
    const host = await render(
      <PlannerLine
        dialect="v1"
        location={{
          via: "the Jupyter server's relay",
          url: 'http://planner.internal:28600',
          source: 'server'
        }}
        commands={commands}
        trans={trans}
      />
    );
    expect(host.querySelector('.jp-bcc-planner-dialect')?.textContent).toBe(
      'Planner: v1 dialect'
    );
    expect(host.querySelector('.jp-bcc-planner-where')?.textContent).toBe(
      'http://planner.internal:28600 (set by your administrator), through the Jupyter server'
    );
    const button = host.querySelector<HTMLButtonElement>(
      '.jp-bcc-test-connection'
    );
    expect(button?.textContent).toBe('Test connection');
    button?.click();
    expect(test).toHaveBeenCalledTimes(1);
  });
});
