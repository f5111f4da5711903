/**
 * Whether a behavior waits for the user (docs/protocol.md#decisions, item 17): interactive mode asks
 * for every behavior that runs code; without it, flagged code is asked about, and never run when no
 * one can be asked.
 */
import { approvalNeed, describeFlags, heldEffect } from '../approval';
import type { ICodeFlag } from '../codeRisk';

describe('approvalNeed', () => {
  // [interactive, runsCode, flagged, canAsk] -> need
  const table: [boolean, boolean, boolean, boolean, string][] = [
    [false, false, false, true, 'apply'],
    [false, true, false, true, 'apply'],
    [false, true, true, true, 'ask'],
    [false, true, true, false, 'skip'],
    [true, false, false, true, 'apply'],
    [true, true, false, true, 'ask'],
    [true, true, true, true, 'ask'],
    [true, true, false, false, 'apply'],
    [true, true, true, false, 'skip']
  ];
  it.each(table)(
    'interactive %s, runs code %s, flagged %s, can ask %s: %s',
    (interactive, runsCode, flagged, canAsk, need) => {
      expect(approvalNeed({ interactive, runsCode, flagged, canAsk })).toBe(
        need
      );
    }
  );
});

describe('what the planner is told of a held behavior', () => {
  const flags: ICodeFlag[] = [
    { risk: 'shell', line: 1, what: '!pip install x' },
    { risk: 'install', line: 1, what: '!pip install x' },
    { risk: 'shell', line: 3, what: 'os.system' }
  ];

  it('groups the flags by what they do, with their lines', () => {
    expect(describeFlags(flags)).toBe(
      'runs shell commands (line 1: !pip install x, line 3: os.system) and installs packages (line 1: !pip install x)'
    );
  });

  it('says who decided', () => {
    expect(heldEffect('behavior_002', flags.slice(1, 2), 2, true)).toBe(
      'Behavior behavior_002 was held before its code ran, because the code installs packages (line 1: !pip install x); the user skipped it: its 2 remaining actions were not applied.'
    );
    expect(heldEffect('behavior_002', flags.slice(1, 2), 2, false)).toContain(
      'no one could approve it'
    );
  });
});
