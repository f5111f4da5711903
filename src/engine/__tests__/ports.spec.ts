import {
  abortInterruptsKernel,
  type IStopReason,
  sourceHash
} from '../ports/driver';
import { RunStopped } from '../run/runControl';

function aborted(reason?: unknown): AbortSignal {
  const controller = new AbortController();
  controller.abort(reason);
  return controller.signal;
}

describe('the notebook port', () => {
  it('interrupts the kernel unless the stop asks to leave it alone', () => {
    expect(abortInterruptsKernel(aborted(new RunStopped(false)))).toBe(false);
    expect(abortInterruptsKernel(aborted(new RunStopped(true)))).toBe(true);
    expect(abortInterruptsKernel(aborted(new RunStopped()))).toBe(true);
    // A plain abort, or any other reason, interrupts.
    expect(abortInterruptsKernel(aborted())).toBe(true);
    expect(abortInterruptsKernel(aborted('closing'))).toBe(true);
    expect(abortInterruptsKernel(aborted(null))).toBe(true);
  });

  it('takes the engine stop as a stop reason of the port', () => {
    const reason: IStopReason = new RunStopped(false);
    expect(reason.interruptKernel).toBe(false);
  });

  it('hashes a source stably and tells edits apart', () => {
    expect(sourceHash('print(1)')).toBe(sourceHash('print(1)'));
    expect(sourceHash('print(1)')).toMatch(/^[0-9a-f]{16}$/);
    expect(sourceHash('print(1)')).not.toBe(sourceHash('print(2)'));
    expect(sourceHash('')).not.toBe(sourceHash(' '));
  });

  it('hashes as it always has: a notebook saved by an earlier version keeps its stamps', () => {
    expect(
      [
        '',
        'x = 1',
        'df.describe()\nprint(df)',
        '# 销售数据分析报告',
        'é😀'
      ].map(sourceHash)
    ).toEqual([
      '488bdcb81aee8d83',
      'ec7856a1d77328e4',
      '3d578d4193d51f9d',
      '03a7cee1a76fc535',
      '82016db748ff104e'
    ]);
    expect(sourceHash(`0 ${'x'.repeat(512 * 1024)}`)).toBe('0b3f03b7f5761e71');
  });
});
