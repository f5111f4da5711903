import { Gettext } from '@jupyterlab/translation';
import * as fs from 'fs';
import * as path from 'path';
import { WORKFLOW_STATES } from '../../engine/fsm';
import { msg, say } from '../../engine/messages';
import * as protocol from '../../protocol/messages';
import type { IPauseReason } from '../../engine/types';
import type { IProgressState } from '../../engine/progress';
import {
  buildTree,
  commandAvailability,
  CompletedItems,
  describePlanner,
  describeRun,
  formatDuration,
  formatElapsed,
  trackOutputs,
  translateMessage,
  translateVia
} from '../present';
import {
  progressInImputeStep,
  progressInMissingStep,
  runningSnapshot,
  snapshot,
  trans
} from './snapshots';

describe('describeRun: the state in plain words', () => {
  it('says a run that never started is not started', () => {
    expect(describeRun(snapshot(), trans)).toBe('Not started');
  });

  it('names the behavior and the step while an action runs', () => {
    expect(describeRun(runningSnapshot(), trans)).toBe(
      'Running behavior 3 of step Handle missing values'
    );
  });

  it('says the same between two actions of a behavior', () => {
    for (const state of ['BEHAVIOR_RUNNING', 'ACTION_COMPLETED'] as const) {
      expect(describeRun(runningSnapshot({ state }), trans)).toBe(
        'Running behavior 3 of step Handle missing values'
      );
    }
  });

  it('waits for the planner between behaviors and steps', () => {
    for (const state of [
      'STAGE_RUNNING',
      'STEP_RUNNING',
      'BEHAVIOR_COMPLETED',
      'STEP_COMPLETED',
      'STAGE_COMPLETED'
    ] as const) {
      expect(describeRun(runningSnapshot({ state }), trans)).toBe(
        'Waiting for the planner…'
      );
    }
  });

  it('says a rewind is under way, not that the planner is asked', () => {
    expect(
      describeRun(
        runningSnapshot({ state: 'STEP_RUNNING', rewinding: true }),
        trans
      )
    ).toBe('Rewinding…');
  });

  it('tells pauses apart: step mode, the user, an action', () => {
    const paused = (pauseReason: IPauseReason) =>
      describeRun(
        runningSnapshot({ state: 'PAUSED', paused: true, pauseReason }),
        trans
      );
    expect(
      paused({ kind: 'step', message: 'Step mode: paused after one behavior' })
    ).toBe('Paused (step mode)');
    expect(paused({ kind: 'user', message: 'Paused by the user' })).toBe(
      'Paused'
    );
    expect(paused({ kind: 'kernel', message: 'The kernel restarted' })).toBe(
      'Paused: The kernel restarted'
    );
  });

  it('says a pause is coming at the next action boundary', () => {
    expect(
      describeRun(
        runningSnapshot({
          pausing: true,
          pauseReason: { kind: 'user', message: 'Paused by the user' }
        }),
        trans
      )
    ).toBe('Pausing after the current action…');
  });

  it('asks for approval in interactive mode once a behavior is received', () => {
    const waiting = runningSnapshot({
      state: 'BEHAVIOR_RUNNING',
      bufferedActions: 4
    });
    expect(describeRun(waiting, trans, { awaitingApproval: true })).toBe(
      'Waiting for your approval of behavior 3'
    );
  });

  it('names the pending updates', () => {
    expect(
      describeRun(runningSnapshot({ state: 'WORKFLOW_UPDATE_PENDING' }), trans)
    ).toBe('Waiting for you to confirm a workflow update');
    expect(
      describeRun(runningSnapshot({ state: 'STEP_UPDATE_PENDING' }), trans)
    ).toBe('Updating the steps of stage Data cleaning');
  });

  it('says completed and shows errors with their message', () => {
    expect(
      describeRun(
        runningSnapshot({ state: 'WORKFLOW_COMPLETED', running: false }),
        trans
      )
    ).toBe('Completed');
    expect(
      describeRun(
        runningSnapshot({
          state: 'ERROR',
          running: false,
          error: {
            message: '/generating failed: HTTP 500',
            endpoint: 'generating',
            retryable: true
          }
        }),
        trans
      )
    ).toBe('Error: the planner could not generate the next actions');
  });

  it('says where a stopped run stands, and why it stopped at the step limit', () => {
    const stopped = runningSnapshot({ state: 'IDLE', running: false });
    expect(describeRun(stopped, trans)).toBe(
      'Stopped at step Handle missing values'
    );
    expect(
      describeRun({ ...stopped, behaviorsRun: 5 }, trans, {
        finished: { reason: 'max_steps', message: '' }
      })
    ).toBe('Stopped after 5 behaviors (maximum execution steps)');
  });

  it('has words for every state, running or not', () => {
    for (const state of WORKFLOW_STATES) {
      for (const running of [true, false]) {
        const text = describeRun(runningSnapshot({ state, running }), trans);
        expect(text.length).toBeGreaterThan(3);
        expect(text).not.toContain('%');
      }
    }
  });
});

describe('commandAvailability', () => {
  it('offers only Run before a run', () => {
    expect(commandAvailability(snapshot())).toEqual({
      run: true,
      pause: false,
      resume: false,
      step: false,
      stop: false,
      retry: false
    });
  });

  it('offers Pause, Step and Stop while running, Resume while paused', () => {
    const running = commandAvailability(runningSnapshot());
    expect(running).toMatchObject({
      run: false,
      pause: true,
      resume: false,
      step: true,
      stop: true
    });
    const paused = commandAvailability(
      runningSnapshot({ state: 'PAUSED', paused: true })
    );
    expect(paused).toMatchObject({ pause: false, resume: true, step: true });
  });

  it('offers neither Pause nor Step once the workflow completed, while its last save finishes', () => {
    expect(
      commandAvailability(runningSnapshot({ state: 'WORKFLOW_COMPLETED' }))
    ).toMatchObject({ pause: false, step: false, resume: false });
  });

  it('offers Retry after a retryable error and Resume after a stop', () => {
    const failed = runningSnapshot({
      state: 'ERROR',
      running: false,
      error: { message: 'x', endpoint: 'generating', retryable: true }
    });
    expect(commandAvailability(failed)).toMatchObject({
      retry: true,
      resume: false,
      stop: true,
      run: true
    });
    const stopped = runningSnapshot({ state: 'IDLE', running: false });
    expect(commandAvailability(stopped)).toMatchObject({
      resume: true,
      retry: false,
      stop: false
    });
  });

  it('offers nothing without a notebook', () => {
    expect(Object.values(commandAvailability(null))).not.toContain(true);
  });
});

describe('buildTree: stages > steps > behaviors', () => {
  const completed = new CompletedItems();
  completed.observe(progressInMissingStep());
  const progress = progressInImputeStep();
  completed.observe(progress);
  const tree = buildTree(runningSnapshot(), progress, completed);

  it('tells a running behavior from one a stopped run left unfinished', () => {
    const current = tree[1].steps[1].behaviors[2];
    expect(current.running).toBe(true);
    const stopped = buildTree(
      runningSnapshot({ state: 'IDLE', running: false }),
      progress,
      completed
    );
    expect(stopped[1].steps[1].behaviors[2]).toMatchObject({
      status: 'current',
      running: false
    });
  });

  it('marks stages and steps completed, current or remaining, with their goals', () => {
    expect(tree.map(s => [s.id, s.status, s.goal])).toEqual([
      ['loading', 'completed', 'Get the data in.'],
      ['cleaning', 'current', 'Clean it.'],
      ['findings', 'remaining', null]
    ]);
    expect(tree[1].steps.map(s => [s.id, s.status, s.goal])).toEqual([
      ['missing', 'completed', 'Count the gaps.'],
      ['impute', 'current', 'Fill the gaps.']
    ]);
    expect(tree[2].steps[0].status).toBe('remaining');
  });

  it('gives the focus text of the current stage and step only', () => {
    expect(tree[1].focus).toBe('Clean **carefully**.');
    expect(tree[1].steps[1].focus).toBe(
      'Impute the *numeric* columns with the median.'
    );
    expect(tree[0].focus).toBeNull();
    expect(tree[1].steps[0].focus).toBeNull();
  });

  it('gives each stage and step the planner’s latest assessment of it, current or not', () => {
    expect(tree[1].steps[0].assessment).toEqual({
      reasoning: 'Every column was counted.'
    });
    expect(tree[1].assessment).toEqual({ percent: 50 });
    expect(tree[1].steps[1].assessment).toBeNull();
    expect(tree[0].assessment).toBeNull();
  });

  it('keeps the completed behaviors of earlier steps with goal, outputs and time', () => {
    const [behavior] = tree[1].steps[0].behaviors;
    expect(behavior).toMatchObject({
      id: 'behavior_001',
      iteration: 1,
      status: 'completed',
      goal: 'Count the missing values per column',
      produced: ['missing_summary'],
      durationMs: 2500
    });
  });

  it('lists the current step behaviors in order, the running one current with its goal', () => {
    const behaviors = tree[1].steps[1].behaviors;
    expect(behaviors.map(b => [b.iteration, b.status])).toEqual([
      [1, 'completed'],
      [2, 'completed'],
      [3, 'current']
    ]);
    expect(behaviors[0].goal).toBe('Try the median');
    expect(behaviors[2].goal).toBe('Try the mode for categories');
    expect(behaviors[2].durationMs).toBeNull();
  });

  it('records what completed stages and steps produced', () => {
    expect(tree[0].produced).toEqual(['df']);
    expect(tree[1].steps[0].produced).toEqual(['missing_summary']);
  });

  it('lists the latest artifact of each variable the behaviors seen produced', () => {
    expect(completed.artifacts().map(a => a.artifact_id)).toEqual([
      'df@loading',
      'missing_summary@behavior_001'
    ]);
  });

  it('lists the same artifacts for a run read back, whose earlier behaviors are gone', () => {
    const artifact = (name: string, source: string) => ({
      artifact_id: `${name}@${source}`,
      variable_name: name,
      source
    });
    // Saved: the completed stage and step list what their behaviors produced.
    const saved = {
      stages: {
        current: 'clean',
        completed: [
          {
            stage_id: 'load',
            outputs_produced: { artifacts: [artifact('df', 'load')] }
          }
        ]
      },
      steps: {
        current: 'impute',
        completed: [
          {
            step_id: 'count',
            outputs_produced: {
              artifacts: [artifact('missing', 'behavior_001')]
            }
          }
        ]
      },
      behaviors: { completed: [] }
    } as unknown as IProgressState;
    const reloaded = new CompletedItems();
    reloaded.observe(saved);
    expect(reloaded.artifacts().map(a => a.variable_name)).toEqual([
      'df',
      'missing'
    ]);
  });

  it('is empty before a template is known', () => {
    expect(buildTree(snapshot(), null, new CompletedItems())).toEqual([]);
  });
});

describe('trackOutputs', () => {
  it('marks each expected variable produced, in progress or missing', () => {
    expect(trackOutputs(runningSnapshot())).toEqual([
      { name: 'missing_summary', status: 'produced' },
      { name: 'df_clean', status: 'in_progress' }
    ]);
    const later = runningSnapshot();
    later.outputs.steps.expected.push('imputation_log');
    expect(trackOutputs(later)).toContainEqual({
      name: 'imputation_log',
      status: 'missing'
    });
  });
});

describe('formatDuration', () => {
  it('reads like a person would say it', () => {
    expect(formatDuration(420, trans)).toBe('420 ms');
    expect(formatDuration(2500, trans)).toBe('2.5 s');
    expect(formatDuration(75000, trans)).toBe('1 min 15 s');
    // Rounded once, to the unit shown: never "60.0 s", "1 min 60 s" or "1000 ms".
    expect(formatDuration(999.6, trans)).toBe('1.0 s');
    expect(formatDuration(59960, trans)).toBe('1 min 0 s');
    expect(formatDuration(119500, trans)).toBe('2 min 0 s');
  });
});

describe('formatElapsed: the ticking wait for the planner', () => {
  it('counts whole seconds, then minutes and seconds', () => {
    expect(formatElapsed(0, trans)).toBe('0 s');
    expect(formatElapsed(12900, trans)).toBe('12 s');
    expect(formatElapsed(72000, trans)).toBe('1 min 12 s');
    expect(formatElapsed(-5, trans)).toBe('0 s');
  });
});

describe('describePlanner: the planner line', () => {
  it('names the dialect once known', () => {
    expect(describePlanner('v1', null, trans)).toEqual({
      dialect: 'Planner: v1 dialect',
      where: null
    });
    expect(describePlanner(null, null, trans).dialect).toBe('Planner');
  });

  it("says where the relay forwards and who chose it, else the transport's label", () => {
    const via = "the Jupyter server's relay (/notebook-bcc/relay)";
    expect(
      describePlanner(
        'dslc',
        { via, url: 'http://planner.internal:28600', source: 'server' },
        trans
      ).where
    ).toBe(
      'http://planner.internal:28600 (set by your administrator), through the Jupyter server'
    );
    expect(
      describePlanner(
        null,
        { via, url: 'http://localhost:28600', source: 'user' },
        trans
      ).where
    ).toBe('http://localhost:28600, through the Jupyter server');
    expect(
      describePlanner(
        null,
        { via, url: 'http://planner.site:28600', source: 'overrides' },
        trans
      ).where
    ).toBe(
      'http://planner.site:28600 (set by your administrator), through the Jupyter server'
    );
    expect(
      describePlanner(null, { via: 'http://localhost:28600' }, trans).where
    ).toBe('http://localhost:28600');
    expect(
      describePlanner(
        null,
        { via: 'Demo planner (built in)', builtin: true },
        trans
      ).where
    ).toBe(
      "A fixed pandas analysis. Set your planner's URL in Settings > Notebook-BCC."
    );
  });
});

describe('translateMessage: the engine speaks ids, the view the user language', () => {
  const catalogue = path.resolve(
    __dirname,
    '../../../jupyterlab_notebook_bcc/locale/zh_CN/LC_MESSAGES/notebook_bcc.json'
  );
  const zh = new Gettext({ domain: 'notebook_bcc', locale: 'zh-CN' });
  const data = JSON.parse(fs.readFileSync(catalogue, 'utf8'));
  zh.loadJSON(
    { ...data, '': { ...data[''], pluralForms: data[''].plural_forms } },
    'notebook_bcc'
  );

  it('shows an engine message in English without a language pack', () => {
    expect(translateMessage(say('runFailed', 'boom'), trans)).toBe(
      'The run failed: boom'
    );
  });

  it('translates the template and fills in the parameters', () => {
    expect(translateMessage(say('maxSteps', 4, 10), zh)).toBe(
      '已执行 4 个行为后停止：达到最大执行步数（10）。可在设置中调高此上限，或继续运行。'
    );
    expect(
      describeRun(
        runningSnapshot({
          state: 'PAUSED',
          paused: true,
          pauseReason: {
            kind: 'kernel',
            ...say('kernelUnusableDetail', 'The kernel is dead')
          }
        }),
        zh
      )
    ).toBe('已暂停：内核不可用：The kernel is dead');
    // The notebook's reason (a message itself) is translated inside the engine's.
    expect(
      translateMessage(say('kernelUnusableDetail', msg('kernelDead')), zh)
    ).toBe('内核不可用：内核已终止。请重启内核，然后继续运行。');
  });

  it("translates the planner client's messages, inside the engine's too, and leaves their causes as they are", () => {
    const url = 'http://planner.test/generating';
    const timeout = protocol.say('firstByteTimeout', `POST ${url}`, 300);
    expect(translateMessage(timeout, zh)).toBe(
      `POST ${url} 超时：请求发出后 300 秒内未收到规划器的任何数据`
    );
    expect(translateMessage(say('generatingFailed', timeout.text), zh)).toBe(
      `/generating 请求失败：POST ${url} 超时：请求发出后 300 秒内未收到规划器的任何数据`
    );
    const retry = protocol.say(
      'retrying',
      protocol.msg('requestFailed', 'POST /planning', 'HTTP 503'),
      2,
      1,
      3
    );
    expect(translateMessage(retry, zh)).toBe(
      'POST /planning 失败：HTTP 503；2 秒后重试（第 1 次，共 3 次）'
    );
    expect(translateMessage(retry, trans)).toBe(retry.message);
    const relay = protocol.say('relayLabel', 'http://lab.test/relay');
    expect(translateVia({ via: relay.message, viaText: relay.text }, zh)).toBe(
      'Jupyter 服务器的中继（http://lab.test/relay）'
    );
    expect(
      describePlanner(null, { via: relay.message, viaText: relay.text }, zh)
        .where
    ).toBe('Jupyter 服务器的中继（http://lab.test/relay）');
  });

  it("shows a text without an id (the planner's own words, an older saved run) as it is", () => {
    expect(translateMessage({ message: 'heartbeat' }, zh)).toBe('heartbeat');
    expect(
      translateMessage(
        {
          message: 'from a later version',
          text: { ...msg('runStopped'), id: 'gone' as 'runStopped' }
        },
        zh
      )
    ).toBe('from a later version');
  });
});
