/**
 * Figure 3, variable collection: the time the notebook driver takes to collect the kernel's variables
 * (what the runner does before every /planning) with ten small DataFrames, against ten large ones, with
 * 200 other variables beside them. The cost should follow the number of variables, not their size.
 */
import type { Page } from '@playwright/test';
import type { INotebookDriver } from '../../src/engine/ports/driver';
import type { IBenchWindow } from './page';
import { closeNotebook, newNotebook, runInKernel } from './page';
import { median, round } from './stats';

export interface IVariablesOptions {
  smallRows: number;
  largeRows: number;
  repeats: number;
}

export interface IVariablesResult {
  smallRows: number;
  largeRows: number;
  variables: number;
  repeats: number;
  smallMs: number;
  largeMs: number;
  ratio: number;
  target: number;
  met: boolean;
  /** What the driver reported for one of the large frames. */
  largeSummary: unknown;
  method: string;
}

export const VARIABLES_METHOD =
  "The runner's own NotebookDriver (reached in the page through the loaded runner's private `_driver` " +
  'field) is asked collectVariables() repeatedly, as the runner does before each /planning. The ' +
  'kernel holds ten small and ten large DataFrames (an int, two float and a categorical column) under ' +
  'hidden names, and 200 other variables (ints, strings, lists, dicts, numpy arrays); before each call ' +
  '`frame_0`..`frame_9` are bound (untimed) to the small or the large ones, alternately, so both series ' +
  'see the same machine load. Medians after two warm-up pairs.';

/** Builds both sets of frames under hidden names (a leading underscore is never collected). */
function framesCode(smallRows: number, largeRows: number): string {
  return [
    'import numpy as np',
    'import pandas as pd',
    '_bench_rng = np.random.default_rng(0)',
    'def _bench_frame(rows):',
    '    return pd.DataFrame({',
    "        'id': np.arange(rows),",
    "        'x': _bench_rng.random(rows),",
    "        'y': _bench_rng.random(rows),",
    "        'group': pd.Categorical(np.where(_bench_rng.random(rows) > 0.5, 'a', 'b')),",
    '    })',
    `_bench_frames = {'small': [_bench_frame(${smallRows}) for _ in range(10)],`,
    `                 'large': [_bench_frame(${largeRows}) for _ in range(10)]}`
  ].join('\n');
}

/** Binds `frame_0` ... `frame_9` to the small or the large frames. */
function useFrames(size: 'small' | 'large'): string {
  return `for _bench_i, _bench_f in enumerate(_bench_frames['${size}']): globals()['frame_%d' % _bench_i] = _bench_f`;
}

const OTHER_VARIABLES = [
  'import numpy as np',
  'for __bench_i in range(200):',
  '    __bench_kind = __bench_i % 5',
  '    if __bench_kind == 0:',
  '        __bench_value = __bench_i',
  '    elif __bench_kind == 1:',
  "        __bench_value = 'text value %d' % __bench_i",
  '    elif __bench_kind == 2:',
  '        __bench_value = list(range(__bench_i % 20))',
  '    elif __bench_kind == 3:',
  "        __bench_value = {'index': __bench_i, 'tags': ['a', 'b']}",
  '    else:',
  '        __bench_value = np.arange(100)',
  "    globals()['var_%d' % __bench_i] = __bench_value",
  'del __bench_i, __bench_kind, __bench_value'
].join('\n');

/**
 * Alternates small and large frames (rebinding the names between calls, untimed), so that both series
 * see the same machine load.
 */
async function timeCollection(
  page: Page,
  key: string,
  repeats: number,
  swap: { small: string; large: string }
): Promise<{
  small: number[];
  large: number[];
  sample: Record<string, unknown>;
}> {
  return page.evaluate(
    async ({ key, repeats, swap }) => {
      const w = window as unknown as IBenchWindow;
      const notebook = w.bench.notebooks[key];
      // The notebook's runner is a stand-in until the runtime is loaded (src/lab/lazy.ts).
      const lazy = notebook.runner as unknown as {
        load?: () => Promise<unknown>;
      };
      const runner = lazy.load ? await lazy.load() : lazy;
      const driver = (runner as { _driver: INotebookDriver })._driver;
      const kernel = notebook.panel.sessionContext.session?.kernel;
      if (!kernel) {
        throw new Error('no kernel');
      }
      const use = async (code: string) => {
        const reply = await kernel.requestExecute({
          code,
          store_history: false
        }).done;
        if (reply.content.status !== 'ok') {
          throw new Error(
            `switching the frames failed: ${reply.content.status}`
          );
        }
      };
      const times: Record<'small' | 'large', number[]> = {
        small: [],
        large: []
      };
      let sample: Record<string, unknown> = {};
      for (let i = -2; i < repeats; i++) {
        for (const size of ['small', 'large'] as const) {
          await use(swap[size]);
          const start = performance.now();
          sample = (await driver.collectVariables()).values;
          if (i >= 0) {
            times[size].push(performance.now() - start);
          }
        }
      }
      return { ...times, sample };
    },
    { key, repeats, swap }
  );
}

export async function variablesBenchmark(
  page: Page,
  options: IVariablesOptions
): Promise<IVariablesResult> {
  await newNotebook(page, 'variables');
  await runInKernel(page, 'variables', OTHER_VARIABLES);
  await runInKernel(
    page,
    'variables',
    framesCode(options.smallRows, options.largeRows)
  );
  const times = await timeCollection(page, 'variables', options.repeats, {
    small: useFrames('small'),
    large: useFrames('large')
  });
  await closeNotebook(page, 'variables');
  const expected = `DataFrame(${options.largeRows}×4)`;
  if (times.sample.frame_0 !== expected) {
    throw new Error(
      `the driver reported ${JSON.stringify(times.sample.frame_0)} for frame_0, expected ${expected}`
    );
  }
  const smallMs = median(times.small);
  const largeMs = median(times.large);
  return {
    smallRows: options.smallRows,
    largeRows: options.largeRows,
    variables: Object.keys(times.sample).length,
    repeats: options.repeats,
    smallMs: round(smallMs),
    largeMs: round(largeMs),
    ratio: round(largeMs / smallMs),
    target: 1.5,
    met: largeMs / smallMs <= 1.5,
    largeSummary: times.sample.frame_0,
    method: VARIABLES_METHOD
  };
}
