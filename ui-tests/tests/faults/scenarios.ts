/**
 * Scripted runs for the reference planner's `--replay`, for the faults that need content of their own
 * (a cell that kills the kernel, 10 MB of output, injected markup, a pause before an exec). Each is a
 * two-step workflow: /planning starts step 1, /generating runs it, /planning says it is achieved,
 * /planning starts step 2, /generating runs it and ends it with `end_phase`.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  achievedAnswer,
  continueAnswer,
  IStreamOptions,
  ReplayTraceBuilder,
  startAnswer,
  workflow
} from '../../../src/protocol/testing/replayTrace';

type Action = Record<string, unknown>;

export interface ITwoStepRun {
  name?: string;
  stepNames?: [string, string];
  /** Extra fields of the first /planning answer (e.g. a focus text). */
  start?: Record<string, unknown>;
  first: Action[];
  firstStream?: IStreamOptions;
  second: Action[];
  secondStream?: IStreamOptions;
}

/** Writes the trace to a temporary file and returns its path. */
export function twoStepTrace(run: ITwoStepRun): string {
  const [first, second] = run.stepNames ?? ['Prepare', 'Report'];
  const template = workflow(run.name ?? 'Fault scenario', [
    { id: 'prepare', name: first },
    { id: 'report', name: second }
  ]);
  const trace = new ReplayTraceBuilder()
    .planning(startAnswer(template, run.start ?? {}))
    .actions(run.first, run.firstStream)
    .planning(achievedAnswer())
    .planning(continueAnswer())
    .actions(
      [...run.second, { action: 'end_phase', step_id: 'report' }],
      run.secondStream
    );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bcc-faults-'));
  return trace.write(path.join(dir, 'scenario.trace.jsonl'), fs.writeFileSync);
}

export const MULTIBYTE = 'Données chargées — ✓ 数据已加载 🚀';

export function splitUtf8Run(): ITwoStepRun {
  return {
    first: [
      { action: 'add', shot_type: 'dialogue', content: MULTIBYTE },
      {
        action: 'add',
        shot_type: 'action',
        content: 'numbers = list(range(10))',
        store_id: 'prep'
      },
      { action: 'exec', codecell_id: 'prep', need_output: true }
    ],
    second: [
      {
        action: 'add',
        shot_type: 'action',
        content: 'total = sum(numbers)\nprint(total)',
        store_id: 'rep'
      },
      { action: 'exec', codecell_id: 'rep', need_output: true }
    ]
  };
}

export const KERNEL_KILLER =
  "import os\nprint('stopping the kernel', flush=True)\nos._exit(1)";

export function kernelDeathRun(): ITwoStepRun {
  return {
    first: [
      {
        action: 'add',
        shot_type: 'dialogue',
        content: 'Before the kernel dies.'
      },
      {
        action: 'add',
        shot_type: 'action',
        content: 'before = 41',
        store_id: 'before'
      },
      { action: 'exec', codecell_id: 'before', need_output: true }
    ],
    second: [
      {
        action: 'add',
        shot_type: 'action',
        content: KERNEL_KILLER,
        store_id: 'die'
      },
      { action: 'exec', codecell_id: 'die', need_output: true },
      {
        action: 'add',
        shot_type: 'dialogue',
        content: 'After the kernel came back.'
      },
      {
        action: 'add',
        shot_type: 'action',
        content: 'after = 42\nprint(after)',
        store_id: 'after'
      },
      { action: 'exec', codecell_id: 'after', need_output: true }
    ]
  };
}

export const VICTIM = 'victim = 1';
/** How long the exec of the cell to delete waits after the cell was added. */
export const DELETE_WINDOW_MS = 8000;

export function deleteBeforeExecRun(): ITwoStepRun {
  return {
    first: [
      {
        action: 'add',
        shot_type: 'dialogue',
        content: 'A code cell comes next; it is run a few seconds later.'
      },
      { action: 'add', shot_type: 'action', content: VICTIM },
      { action: 'exec', codecell_id: 'lastAddedCellId', need_output: true },
      {
        action: 'add',
        shot_type: 'dialogue',
        content: 'This note follows the exec.'
      }
    ],
    firstStream: { gapMs: [0, 0, DELETE_WINDOW_MS, 0] },
    second: [
      { action: 'add', shot_type: 'dialogue', content: 'The second step ran.' }
    ]
  };
}

/**
 * About 10 MB of base64 lines (76 characters each, none alike) as one text output of one cell, the way
 * a large repr comes back. Not printed: the Jupyter server drops stream output beyond 1 MB/s
 * (iopub_data_rate_limit), and JupyterLab re-renders a growing stream output whole on each chunk.
 */
export const TEN_MB_CODE = [
  'import base64, os',
  'from IPython.display import display',
  "display({'text/plain': base64.encodebytes(os.urandom(7_500_000)).decode()}, raw=True)"
].join('\n');

export function largeOutputRun(): ITwoStepRun {
  return {
    first: [
      {
        action: 'add',
        shot_type: 'dialogue',
        content: 'The next cell prints about 10 MB.'
      },
      {
        action: 'add',
        shot_type: 'action',
        content: TEN_MB_CODE,
        store_id: 'big'
      },
      { action: 'exec', codecell_id: 'big', need_output: true }
    ],
    second: [
      {
        action: 'add',
        shot_type: 'action',
        content: "print('after the large output')",
        store_id: 'after'
      },
      { action: 'exec', codecell_id: 'after', need_output: true }
    ]
  };
}

/** Markup that would set `window.__bccInjected` if it ever ran. */
export const INJECTIONS = [
  `<img src="x-bcc-missing.png" onerror="window.__bccInjected = 'img onerror'">`,
  `<script>window.__bccInjected = 'script'</script>`,
  `<svg onload="window.__bccInjected = 'svg onload'"></svg>`,
  `<iframe srcdoc="<script>parent.__bccInjected = 'iframe'</script>"></iframe>`,
  `<a href="javascript:window.__bccInjected = 'link'">a link</a>`,
  `<details open ontoggle="window.__bccInjected = 'ontoggle'"><summary>s</summary></details>`
].join('\n\n');

export function injectionRun(): ITwoStepRun {
  const focus = `## Focus with markup\n\n${INJECTIONS}`;
  return {
    stepNames: [
      `Step <img src=x onerror="window.__bccInjected='step name'">`,
      'Report'
    ],
    start: { context_update: { progress_update: { level: 'steps', focus } } },
    first: [
      {
        action: 'update_title',
        title: `Title <img src=x onerror="window.__bccInjected='title'">`
      },
      {
        action: 'new_chapter',
        content: `Chapter <svg onload="window.__bccInjected='chapter'"></svg>`
      },
      {
        action: 'is_thinking',
        shot_type: 'dialogue',
        agent_name: 'Planner',
        thinking_text: INJECTIONS
      },
      { action: 'finish_thinking' },
      {
        action: 'add',
        shot_type: 'dialogue',
        content: `Markdown cell with markup:\n\n${INJECTIONS}`
      },
      {
        action: `<img src=x onerror="window.__bccInjected='action name'">`,
        content: 'unknown action'
      },
      {
        action: 'add',
        shot_type: 'action',
        content: `print(${JSON.stringify(INJECTIONS)})`,
        store_id: 'echo'
      },
      { action: 'exec', codecell_id: 'echo', need_output: true }
    ],
    // The step stays current long enough for its focus to be looked at.
    firstStream: { gapMs: [0, 0, 0, 0, 0, 0, 0, 4000] },
    second: [
      {
        action: 'add',
        shot_type: 'dialogue',
        content: 'Plain text after the markup.'
      }
    ]
  };
}

/** Cells arrive one every 300 ms for about 7 s: long enough to type into another cell meanwhile. */
export function focusRun(): ITwoStepRun {
  return {
    first: Array.from({ length: 24 }, (_, i) =>
      i % 2 === 0
        ? {
            action: 'add',
            shot_type: 'dialogue',
            content: `Note ${i} streamed while the user types.`
          }
        : {
            action: 'add',
            shot_type: 'action',
            content: `streamed_${i} = ${i}`
          }
    ),
    firstStream: { gapMs: 300 },
    second: [{ action: 'add', shot_type: 'dialogue', content: 'Done.' }]
  };
}

/**
 * A planner whose markdown would load `collector` by itself once rendered (an image in the focus text,
 * the title, a cell, a srcset, a reference) and carry a command link: all of it must stay inert.
 */
export function remoteLoadRun(collector: string): ITwoStepRun {
  return {
    start: {
      context_update: {
        progress_update: {
          level: 'steps',
          focus: `Focus ![f](${collector}?d=focus)`
        }
      }
    },
    first: [
      {
        action: 'update_title',
        title: `Sales <img src="${collector}?d=title">`
      },
      {
        action: 'add',
        shot_type: 'dialogue',
        content: [
          `Report ![chart](${collector}?d=markdown)`,
          `<img srcset="${collector}?d=srcset 2x" alt="srcset">`,
          `![logo][c]`,
          '<button data-commandlinker-command="help:about">Open</button>',
          '',
          `[c]: ${collector}?d=reference`
        ].join('\n')
      }
    ],
    // The step stays current a while, with its focus in the panel.
    firstStream: { gapMs: [0, 5000] },
    second: [{ action: 'add', shot_type: 'dialogue', content: 'Plain text.' }]
  };
}
