/** The saved run: export its trace, discard it, take it over from another window (`savedRun.ts`, `start.ts`). */
import { NotebookModel } from '@jupyterlab/notebook';
import {
  acceptDialog,
  dismissDialog,
  waitForDialog
} from '@jupyterlab/testing';
import { CommandIDs } from '../../../tokens';
import { RUN_STATE_METADATA_KEY } from '../../../notebook/metadata';
import { loadRuntimeFirst, setup } from './fixture';

describe('the saved run commands', () => {
  loadRuntimeFirst();

  it('exports a non-empty trace beside the notebook', async () => {
    const { commands, first, runnerOf, saved } = setup();
    expect(commands.isEnabled(CommandIDs.exportTrace)).toBe(false);
    runnerOf(first).trace.length = 1;
    expect(commands.isEnabled(CommandIDs.exportTrace)).toBe(true);
    await commands.execute(CommandIDs.exportTrace);
    expect(saved).toEqual([
      {
        path: 'work/first.bcc-trace.jsonl',
        model: {
          type: 'file',
          format: 'text',
          content: '{"kind":"request"}\n'
        }
      }
    ]);
  });

  it('discards the saved run: the metadata goes, the cells stay, the notebook is saved', async () => {
    const { commands, first, modelOf, runnerOf } = setup();
    const model = new NotebookModel();
    model.sharedModel.insertCell(0, { cell_type: 'code', source: 'x = 1' });
    model.sharedModel.setMetadata(RUN_STATE_METADATA_KEY, { format: 'old' });
    const save = jest.fn(async () => undefined);
    Object.assign(first, { model, context: { ...first.context, model, save } });
    expect(commands.isEnabled(CommandIDs.discardSavedRun)).toBe(false);
    // A saved run that cannot be read is discarded without asking: there is nothing to resume.
    Object.assign(modelOf(first), {
      canDiscardSaved: true,
      savedRunProblems: ['format: unknown']
    });
    expect(commands.isEnabled(CommandIDs.discardSavedRun)).toBe(true);
    expect(commands.label(CommandIDs.discardSavedRun)).toBe(
      'Discard the Saved Workflow Run'
    );

    await commands.execute(CommandIDs.discardSavedRun);
    expect(model.sharedModel.getMetadata(RUN_STATE_METADATA_KEY)).toBe(
      undefined
    );
    expect(model.sharedModel.cells.map(cell => cell.source)).toEqual(['x = 1']);
    expect(save).toHaveBeenCalledTimes(1);
    // The run this session still holds goes too.
    expect(runnerOf(first).forgetRun).toHaveBeenCalledTimes(1);
  });

  it('under real-time collaboration, discards the saved run and leaves the saving to the server', async () => {
    const { commands, first, modelOf } = setup();
    const model = new NotebookModel({ collaborationEnabled: true });
    model.sharedModel.setMetadata(RUN_STATE_METADATA_KEY, { format: 'old' });
    const save = jest.fn(async () => undefined);
    Object.assign(first, { model, context: { ...first.context, model, save } });
    Object.assign(modelOf(first), {
      canDiscardSaved: true,
      savedRunProblems: ['format: unknown']
    });
    await commands.execute(CommandIDs.discardSavedRun);
    expect(model.sharedModel.getMetadata(RUN_STATE_METADATA_KEY)).toBe(
      undefined
    );
    // A save from the page would meet the server's own saves ("File Changed").
    expect(save).not.toHaveBeenCalled();
  });

  it('asks before discarding a saved run that could still be resumed', async () => {
    const { commands, first, modelOf } = setup();
    const model = new NotebookModel();
    model.sharedModel.setMetadata(RUN_STATE_METADATA_KEY, { format: 'x' });
    const save = jest.fn(async () => undefined);
    Object.assign(first, { context: { ...first.context, model, save } });
    Object.assign(modelOf(first), {
      canDiscardSaved: true,
      savedRunProblems: null
    });
    const kept = commands.execute(CommandIDs.discardSavedRun);
    await waitForDialog();
    expect(document.querySelector('.jp-Dialog')?.textContent).toContain(
      'can no longer be resumed'
    );
    await dismissDialog();
    await kept;
    expect(model.sharedModel.getMetadata(RUN_STATE_METADATA_KEY)).toEqual({
      format: 'x'
    });
    expect(save).not.toHaveBeenCalled();

    const gone = commands.execute(CommandIDs.discardSavedRun);
    await acceptDialog();
    await gone;
    expect(model.sharedModel.getMetadata(RUN_STATE_METADATA_KEY)).toBe(
      undefined
    );
    expect(save).toHaveBeenCalledTimes(1);
  });

  it('asks before a take-over reloads a notebook with unsaved changes from disk', async () => {
    const { commands, first, modelOf, runnerOf } = setup();
    const revert = jest.fn(async () => undefined);
    const lock = { acquire: jest.fn(async () => true), release: jest.fn() };
    Object.assign(first, {
      context: {
        ...first.context,
        model: { collaborative: false, dirty: true },
        revert
      }
    });
    Object.assign(modelOf(first), { lock, canTakeOver: true });
    const declined = commands.execute(CommandIDs.takeOver);
    await waitForDialog();
    expect(document.querySelector('.jp-Dialog')?.textContent).toContain(
      'unsaved changes'
    );
    await dismissDialog();
    await declined;
    expect(revert).not.toHaveBeenCalled();
    expect(runnerOf(first).resumeFromSaved).not.toHaveBeenCalled();
    expect(lock.acquire).not.toHaveBeenCalled();

    const taken = commands.execute(CommandIDs.takeOver);
    await acceptDialog();
    await taken;
    expect(revert).toHaveBeenCalledTimes(1);
    expect(runnerOf(first).resumeFromSaved).toHaveBeenCalledTimes(1);
  });

  it('takes over: reloads the notebook from disk, then resumes its run holding the lock', async () => {
    const { commands, first, modelOf, runnerOf } = setup();
    const order: string[] = [];
    const revert = jest.fn(async () => {
      order.push('revert');
    });
    runnerOf(first).resumeFromSaved.mockImplementation(async () => {
      order.push('resume');
      return null;
    });
    const lock = {
      acquire: jest.fn(async () => {
        order.push('acquire');
        return true;
      }),
      release: jest.fn()
    };
    Object.assign(first, {
      context: { ...first.context, model: { collaborative: false }, revert }
    });
    Object.assign(modelOf(first), { lock, canTakeOver: false });
    expect(commands.isEnabled(CommandIDs.takeOver)).toBe(false);
    await commands.execute(CommandIDs.takeOver);
    expect(order).toEqual([]);

    modelOf(first).canTakeOver = true;
    await commands.execute(CommandIDs.takeOver);
    expect(order).toEqual(['acquire', 'revert', 'resume']);
    // Nothing to resume: the lock is let go.
    expect(lock.release).toHaveBeenCalledTimes(1);
  });
});
