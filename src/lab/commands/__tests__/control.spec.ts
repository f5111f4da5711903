/** Controlling a live run: step, pause, resume, stop, retry, set variables (`control.ts`, `start.ts`), and rewinding it (`rewind.ts`). */
import { Notification } from '@jupyterlab/apputils';
import {
  acceptDialog,
  dismissDialog,
  waitForDialog
} from '@jupyterlab/testing';
import type { IRunSnapshot } from '../../../engine/types';
import { refusal } from '../../../engine/messages';
import { markingTrans } from '../../../ui/__tests__/markingTranslator';
import { CommandIDs } from '../../../tokens';
import { loadRuntimeFirst, NONE, setup } from './fixture';

describe('the run controls', () => {
  loadRuntimeFirst();

  it('steps, and pauses or resumes with one toggle', async () => {
    const { commands, first, modelOf, runnerOf } = setup();
    const runner = runnerOf(first);
    await commands.execute(CommandIDs.step);
    expect(runner.step).toHaveBeenCalledTimes(1);

    modelOf(first).availability = { ...NONE, pause: true };
    await commands.execute(CommandIDs.togglePause);
    expect(runner.pause).toHaveBeenCalledTimes(1);

    modelOf(first).availability = { ...NONE, resume: true };
    runner.isRunning = true;
    await commands.execute(CommandIDs.togglePause);
    expect(runner.resume).toHaveBeenCalledTimes(1);
    expect(runner.pause).toHaveBeenCalledTimes(1);
  });

  it('resumes a stopped run from the notebook and opens the panel', async () => {
    const { commands, first, modelOf, runnerOf, opened } = setup();
    const runner = runnerOf(first);
    await commands.execute(CommandIDs.resume);
    expect(runner.resumeFromSaved).not.toHaveBeenCalled();
    modelOf(first).canResumeSaved = true;
    await commands.execute(CommandIDs.resume);
    expect(runner.resumeFromSaved).toHaveBeenCalledTimes(1);
    expect(runner.resume).not.toHaveBeenCalled();
    expect(opened).toHaveBeenCalledTimes(1);
  });

  it('holds the run while the Stop dialog asks, and lets it go on when cancelled', async () => {
    const { commands, first, runnerOf, modelOf } = setup();
    const runner = runnerOf(first);
    runner.isRunning = true;
    modelOf(first).availability = { ...NONE, pause: true, stop: true };
    const cancelled = commands.execute(CommandIDs.stop);
    await waitForDialog();
    // Paused as the dialog opened: no cell lands behind it.
    expect(runner.pause).toHaveBeenCalledTimes(1);
    expect(runner.resume).not.toHaveBeenCalled();
    await dismissDialog();
    await cancelled;
    expect(runner.resume).toHaveBeenCalledTimes(1);
    expect(runner.stop).not.toHaveBeenCalled();

    const stopped = commands.execute(CommandIDs.stop);
    await waitForDialog();
    await acceptDialog();
    await stopped;
    expect(runner.stop).toHaveBeenCalledTimes(1);
    expect(runner.resume).toHaveBeenCalledTimes(1);
  });

  it('does not resume a run the user had paused before Stop', async () => {
    const { commands, first, runnerOf, modelOf } = setup();
    const runner = runnerOf(first);
    runner.isRunning = true;
    modelOf(first).availability = { ...NONE, resume: true, stop: true };
    const cancelled = commands.execute(CommandIDs.stop);
    await waitForDialog();
    await dismissDialog();
    await cancelled;
    expect(runner.pause).not.toHaveBeenCalled();
    expect(runner.resume).not.toHaveBeenCalled();
  });

  it('interrupts the kernel on stop only while an action runs', async () => {
    const { commands, first, runnerOf } = setup();
    const runner = runnerOf(first);
    await commands.execute(CommandIDs.stop, { interruptKernel: true });
    expect(runner.stop).toHaveBeenLastCalledWith({ interruptKernel: false });
    runner.snapshot = { state: 'ACTION_RUNNING' };
    await commands.execute(CommandIDs.stop, { interruptKernel: true });
    expect(runner.stop).toHaveBeenLastCalledWith({ interruptKernel: true });
    await commands.execute(CommandIDs.stop, { interruptKernel: false });
    expect(runner.stop).toHaveBeenLastCalledWith({ interruptKernel: false });
    // A rewind re-running the kept cells runs code outside any action.
    runner.snapshot = { state: 'STEP_RUNNING', rewinding: true };
    await commands.execute(CommandIDs.stop, { interruptKernel: true });
    expect(runner.stop).toHaveBeenLastCalledWith({ interruptKernel: true });
  });

  it('retries the failed request', async () => {
    const { commands, first, runnerOf } = setup();
    await commands.execute(CommandIDs.retry);
    expect(runnerOf(first).retry).toHaveBeenCalledTimes(1);
  });

  it("reports the run's refusal in the user's language", async () => {
    const { commands, first, modelOf, runnerOf } = setup(markingTrans);
    const error = jest.spyOn(Notification, 'error');
    modelOf(first).availability = { ...NONE, retry: true };
    runnerOf(first).retry.mockRejectedValueOnce(refusal('noFailedRequest'));
    await commands.execute(CommandIDs.retry);
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(error).toHaveBeenCalledWith(
      '⟦⟦Retry⟧ failed: ⟦There is no failed request to retry.⟧⟧',
      expect.anything()
    );
    error.mockRestore();
  });

  it('offers Set Variables only when the failed run names variables the planner lacks, and retries with them', async () => {
    const { commands, first, modelOf, runnerOf } = setup();
    const model = Object.assign(modelOf(first), {
      snapshot: {
        error: {
          endpoint: 'generating',
          message: 'variables missing: target_variable',
          retryable: true,
          missingVariables: ['target_variable']
        }
      } as Pick<IRunSnapshot, 'error'>
    });
    // Not while the run cannot retry.
    expect(commands.isVisible(CommandIDs.setVariables)).toBe(false);
    model.availability = { ...NONE, retry: true };
    expect(commands.isVisible(CommandIDs.setVariables)).toBe(true);
    expect(commands.isEnabled(CommandIDs.setVariables)).toBe(true);
    await commands.execute(CommandIDs.setVariables, {
      variables: { target_variable: 'revenue', empty: ' ', other: 3 }
    });
    expect(runnerOf(first).retry).toHaveBeenCalledWith({
      variables: { target_variable: 'revenue' }
    });
    // An error that names no variable: Retry only.
    model.snapshot = {
      error: { endpoint: 'generating', message: 'HTTP 500', retryable: true }
    };
    expect(commands.isVisible(CommandIDs.setVariables)).toBe(false);
  });

  it('undoes the last behavior and redoes from a step through the runner, when the run offers it', async () => {
    const { commands, first, modelOf, runnerOf } = setup();
    const plan = { target: { kind: 'behavior' }, stepId: 'p2' };
    const record = { kind: 'undo_behavior' };
    const runner = Object.assign(runnerOf(first), {
      rewindPlan: jest.fn(() => Promise.resolve(plan)),
      rewind: jest.fn(() => Promise.resolve(record))
    });
    const model = Object.assign(modelOf(first), {
      snapshot: {
        running: true,
        paused: false,
        stages: [],
        rewind: { undo: null, redoSteps: [], last: null }
      } as Pick<IRunSnapshot, 'running' | 'paused' | 'stages' | 'rewind'>
    });
    expect(commands.isEnabled(CommandIDs.undoBehavior)).toBe(false);
    const redoArgs = { stageId: 's1', stepId: 'p2' };
    expect(commands.isVisible(CommandIDs.redoFromStep)).toBe(false);
    expect(commands.isVisible(CommandIDs.redoFromStep, redoArgs)).toBe(true);
    expect(commands.isEnabled(CommandIDs.redoFromStep, redoArgs)).toBe(false);

    // Paused, with what it can go back to; the model says when a rewind may start (RunModel.canRewind).
    model.snapshot = {
      ...model.snapshot,
      paused: true,
      rewind: {
        undo: { behaviorId: 'b1', stepId: 'p2' },
        redoSteps: ['s1/p2'],
        last: null
      }
    };
    expect(commands.isEnabled(CommandIDs.undoBehavior)).toBe(false);
    model.canRewind = true;
    expect(commands.isEnabled(CommandIDs.undoBehavior)).toBe(true);
    expect(commands.isEnabled(CommandIDs.redoFromStep, redoArgs)).toBe(true);
    expect(
      commands.isEnabled(CommandIDs.redoFromStep, {
        stageId: 's1',
        stepId: 'p1'
      })
    ).toBe(false);

    expect(
      await commands.execute(CommandIDs.undoBehavior, { confirm: false })
    ).toBe(record);
    expect(runner.rewindPlan).toHaveBeenCalledWith({ kind: 'behavior' });
    expect(runner.rewind).toHaveBeenCalledWith(
      { kind: 'behavior' },
      { restartKernel: false }
    );
    await commands.execute(CommandIDs.redoFromStep, {
      ...redoArgs,
      confirm: false,
      restartKernel: true
    });
    expect(runner.rewind).toHaveBeenLastCalledWith(
      { kind: 'step', stageId: 's1', stepId: 'p2' },
      { restartKernel: true }
    );

    // Nothing kept for that point: the user is told, nothing is rewound.
    const warning = jest.spyOn(Notification, 'warning');
    runner.rewindPlan.mockResolvedValueOnce(null as unknown as typeof plan);
    await commands.execute(CommandIDs.undoBehavior, { confirm: false });
    expect(runner.rewind).toHaveBeenCalledTimes(2);
    expect(warning).toHaveBeenCalledWith(
      'Undo Last Behavior: that point of the run is no longer kept.',
      { autoClose: 5000 }
    );
  });
});
