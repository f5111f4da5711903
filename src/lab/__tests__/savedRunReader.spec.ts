import { savedRun } from '../../ui/__tests__/snapshots';
import { loadedRuntime, readSavedRun } from '../lazy';

describe('readSavedRun: the run models read a saved run through the runtime', () => {
  it('loads the runtime on first read, says so, and reads the run once it has', async () => {
    expect(readSavedRun(undefined, 100, () => undefined)).toBeNull();
    expect(loadedRuntime()).toBeNull();
    let loaded!: () => void;
    const arrived = new Promise<void>(resolve => (loaded = resolve));
    expect(readSavedRun(savedRun(), 100, () => loaded())).toBeUndefined();
    await arrived;
    const read = readSavedRun(savedRun(), 100, () => {
      throw new Error('read at once once the runtime is loaded');
    });
    expect(read?.problems).toBeNull();
    expect(read?.state?.task).toBe('What drives prices?');
    expect(read?.snapshot?.step.name).toBe('Handle missing values');
  });

  it('says what is wrong with a value that is not a saved run', () => {
    const read = readSavedRun({ format: 'notebook-bcc-run' }, 100, () => {
      throw new Error('the runtime is loaded');
    });
    expect(read?.state).toBeNull();
    expect(read?.snapshot).toBeNull();
    expect(read?.problems?.length).toBeGreaterThan(0);
  });
});
