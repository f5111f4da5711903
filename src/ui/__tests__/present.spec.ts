import { Gettext } from '@jupyterlab/translation';
import * as fs from 'fs';
import * as path from 'path';
import { WORKFLOW_STATES } from '../../engine/state/fsm';
import { msg, say } from '../../engine/messages';
import * as protocol from '../../protocol/messages';
import type { IPauseReason, IRunError, IRunSnapshot } from '../../engine/types';
import { describePlanner } from '../plannerText';
import {
  commandAvailability,
  describeRun,
  formatDuration,
  formatElapsed,
  translateMessage,
  translateVia
} from '../present';
import { runningSnapshot, snapshot, trans } from './snapshots';

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
    ).toBe('Stopped by an error: the planner could not write the next cells');
  });

  it('says what happened when the run stopped on an error, not which request failed', () => {
    const failed = (error: Partial<IRunError>) =>
      describeRun(
        runningSnapshot({
          state: 'ERROR',
          running: false,
          error: {
            message: 'x',
            endpoint: 'generating',
            retryable: true,
            ...error
          }
        }),
        trans
      );
    expect(failed({ endpoint: 'planning' })).toBe(
      'Stopped by an error: the planner could not plan the next step'
    );
    expect(failed({ endpoint: 'engine' })).toBe(
      'Stopped by an error in the run'
    );
    // The LLM planner says its model settings are wrong.
    expect(failed({ action: 'open-llm-settings' })).toBe(
      'Stopped: the language model could not be used'
    );
    for (const text of [
      failed({}),
      failed({ endpoint: 'planning' }),
      failed({ action: 'open-llm-settings' })
    ]) {
      expect(text).not.toMatch(/generat|action|HTTP|\/planning/);
    }
  });

  it('does not say a plain "Completed" over a step given up or a deliverable not delivered', () => {
    const ended = (outcome: IRunSnapshot['outcome']) =>
      describeRun(
        runningSnapshot({
          state: 'WORKFLOW_COMPLETED',
          running: false,
          outcome
        }),
        trans
      );
    const deliverable = {
      name: 'answer',
      kind: 'label' as const,
      describe: 'a region name',
      value: null,
      type: null,
      reason: '`answer` is missing',
      terms: { of_column: 'region', frame: 'df' }
    };
    expect(
      ended({
        ok: false,
        givenUp: [{ stageId: 's', stepId: 'load', name: 'Load', reason: null }],
        deliverables: [{ ...deliverable, status: 'failed' }],
        contractSummary: null,
        summary:
          'Finished with problems: 1 step given up; `answer` not delivered'
      })
    ).toBe('Finished with problems: 1 step given up; `answer` not delivered');
    expect(
      ended({
        ok: true,
        givenUp: [],
        deliverables: [
          { ...deliverable, status: 'delivered', value: 'North', reason: null }
        ],
        contractSummary: null,
        summary: 'Completed'
      })
    ).toBe('Completed');
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
