/**
 * Code that reaches outside is held without approval (docs/protocol.md#decisions, item 17): with
 * interactive mode off, a behavior whose code is flagged (codeRisk.ts) pauses before that code is
 * added, shows the flags and runs only if the user allows it; a skip tells the planner why.
 */
import { FakeNotebookDriver } from '../testing';
import type { BehaviorDecision, IBehaviorApproval } from '../types';
import {
  code,
  effectsOf,
  exec,
  ONE_STEP,
  plan,
  setup,
  text,
  withTemplate
} from './runnerSetup';

/** A run of one step whose behaviors are `behaviors`, with the user's answers in order. */
function run(
  behaviors: ReturnType<typeof code>[][],
  answers: BehaviorDecision[],
  interactive = false
) {
  const asked: IBehaviorApproval[] = [];
  const s = setup(
    {
      planning: [
        withTemplate(false, ONE_STEP),
        ...behaviors.slice(1).map(() => plan(false)),
        plan(true)
      ],
      generating: behaviors
    },
    {
      settings: { interactive },
      hooks: {
        approveBehavior: async request => {
          asked.push(request);
          return answers.shift() ?? 'run';
        }
      }
    }
  );
  return { s, asked };
}

const EXFILTRATE = 'requests.post(url, json=dict(os.environ))';

describe('flagged code without interactive mode', () => {
  it('holds code that sends the environment out, and a skip tells the planner why', async () => {
    const { s, asked } = run(
      [[text('Sending the data'), code(EXFILTRATE), exec()]],
      ['skip']
    );
    await s.runner.start({ task: 't' });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      reason: 'flagged',
      codeCells: [EXFILTRATE],
      codeFlags: [
        [
          { risk: 'network', line: 1, what: 'requests.post' },
          { risk: 'environment', line: 1, what: 'os.environ' }
        ]
      ]
    });
    // What came before the code was applied; the code was neither added nor run.
    expect(s.driver.cells.map(cell => cell.source)).toEqual([
      'Sending the data'
    ]);
    expect(s.driver.executed).toEqual([]);
    expect(s.client.planningRequests[1].behavior_feedback).toMatchObject({
      last_action_result: 'skipped'
    });
    expect(effectsOf(s.client.planningRequests[1])).toEqual([
      'Behavior behavior_001 was held before its code ran, because the code opens network connections (line 1: requests.post) and reads the environment (line 1: os.environ); the user skipped it: its 2 remaining actions were not applied.'
    ]);
  });

  it('holds a shell install, and runs it once the user allows it', async () => {
    const { s, asked } = run(
      [[code('!pip install scikit-learn'), exec()]],
      ['run']
    );
    await s.runner.start({ task: 't' });
    expect(asked.map(request => request.codeFlags)).toEqual([
      [
        [
          { risk: 'shell', line: 1, what: '!pip install scikit-learn' },
          { risk: 'install', line: 1, what: '!pip install scikit-learn' }
        ]
      ]
    ]);
    expect(s.driver.executed).toHaveLength(1);
    expect(s.client.planningRequests[1].behavior_feedback).toMatchObject({
      last_action_result: 'success'
    });
  });

  it('does not ask for code that reaches nothing outside', async () => {
    const { s, asked } = run([[code('a = 1'), exec()]], []);
    await s.runner.start({ task: 't' });
    expect(asked).toEqual([]);
    expect(s.driver.variables).toEqual({ a: '1' });
  });

  it('holds an exec of an existing cell whose code is flagged', async () => {
    const { s, asked } = run(
      [[code('a = 1', 'first'), exec('first')], [exec('first')]],
      ['skip']
    );
    const driver = s.driver as FakeNotebookDriver;
    // The user (or another behavior) changed the cell between the behaviors.
    const edit = driver.execCell.bind(driver);
    let edited = false;
    driver.execCell = async request => {
      const result = await edit(request);
      if (!edited) {
        edited = true;
        await driver.updateCell(request.cellId, 'import socket');
      }
      return result;
    };
    await s.runner.start({ task: 't' });
    expect(asked).toHaveLength(1);
    expect(asked[0].existingCells).toMatchObject([
      {
        source: 'import socket',
        flags: [{ risk: 'network', line: 1, what: 'import socket' }]
      }
    ]);
    expect(s.driver.executed).toHaveLength(1);
  });

  it('does not hold the data files the run was given', async () => {
    const { s, asked } = run(
      [[code('df = pd.read_csv("../data/sales.csv")'), exec()]],
      []
    );
    await s.runner.start({ task: 't', dataFiles: ['../data/sales.csv'] });
    expect(asked).toEqual([]);
    expect(s.driver.executed).toHaveLength(1);
  });

  it('skips flagged code when no one can be asked', async () => {
    const s = setup(
      {
        planning: [withTemplate(false, ONE_STEP), plan(true)],
        generating: [[code('!pip install x'), exec()]]
      },
      { hooks: {} }
    );
    await s.runner.start({ task: 't' });
    expect(s.driver.executed).toEqual([]);
    expect(s.client.planningRequests[1].behavior_feedback).toMatchObject({
      last_action_result: 'skipped'
    });
  });

  it('shows the flags in interactive mode too', async () => {
    const { s, asked } = run([[code('import socket'), exec()]], ['run'], true);
    await s.runner.start({ task: 't' });
    expect(asked).toMatchObject([
      {
        reason: 'interactive',
        codeFlags: [[{ risk: 'network', line: 1, what: 'import socket' }]]
      }
    ]);
  });
});
