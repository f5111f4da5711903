/**
 * `make eval`: each closed-form task (tasks.ts) run through the whole extension in a real browser, against
 * the configured endpoint (the local Gemma 3 270M by default; BCC_EVAL_BASE_URL, BCC_EVAL_MODEL and
 * NOTEBOOK_BCC_LLM_API_KEY for your own). Prints accuracy, tokens and time per task and in total, and writes
 * them to ui-tests/eval-results/eval.json. Not part of `make test`: it judges a model, not the code.
 */
import type { Page } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import {
  expect,
  installProbe,
  newNotebook,
  panel,
  startRun,
  stateLine,
  test,
  waitForEnd
} from '../tests/helpers';
import { evalTasks, isCorrect, salesCsv, salesRows } from './tasks';

const ROWS = salesRows();
const TASKS = evalTasks(ROWS);
const RESULTS = path.resolve(__dirname, '../eval-results');
const LIMIT = Number(process.env.BCC_EVAL_TASKS || TASKS.length);
// Resume an interrupted evaluation from task N (0-based); results are appended to eval.jsonl.
const FROM = Number(process.env.BCC_EVAL_FROM || 0);

interface IResult {
  id: string;
  expected: string | number;
  answer: string | null;
  correct: boolean;
  state: string;
  promptTokens: number;
  completionTokens: number;
  seconds: number;
}

// One line per task, read by eval/summary.js: a failed task restarts Playwright's worker, so nothing is
// kept in memory across tasks.
const LOG = path.join(RESULTS, 'eval.jsonl');

/** The kernel's `answer` as JSON text, or null when the run left none. */
async function kernelAnswer(page: Page): Promise<string | null> {
  return page.evaluate(async () => {
    const widget = window.jupyterapp.shell.currentWidget as unknown as {
      sessionContext: {
        session: {
          kernel: {
            requestExecute(content: { code: string; silent?: boolean }): {
              onIOPub: (msg: {
                header: { msg_type: string };
                content: { text?: string };
              }) => void;
              done: Promise<unknown>;
            };
          };
        };
      };
    };
    const future = widget.sessionContext.session.kernel.requestExecute({
      code: [
        'import json as _bcc_json',
        'try:',
        '    _bcc_value = answer.item() if hasattr(answer, "item") else answer',
        '    if not isinstance(_bcc_value, (int, float, str, bool)):',
        '        _bcc_value = str(_bcc_value)',
        '    print("ANSWER=" + _bcc_json.dumps(_bcc_value))',
        'except NameError:',
        '    print("ANSWER=<none>")'
      ].join('\n')
    });
    let text = '';
    future.onIOPub = msg => {
      if (msg.header.msg_type === 'stream') {
        text += msg.content.text ?? '';
      }
    };
    await future.done;
    const line = text.split('\n').find(l => l.startsWith('ANSWER='));
    const value = line ? line.slice('ANSWER='.length) : '<none>';
    return value === '<none>' ? null : value;
  });
}

test.describe('make eval', () => {
  test.beforeAll(() => {
    fs.mkdirSync(RESULTS, { recursive: true });
  });

  test.beforeEach(async ({ page }) => {
    await installProbe(page);
  });

  for (const task of TASKS.slice(FROM, LIMIT)) {
    test(task.id, async ({ page, tmpPath }) => {
      test.setTimeout(15 * 60 * 1000);
      await page.contents.uploadContent(
        salesCsv(ROWS),
        'text',
        `${tmpPath}/sales.csv`
      );
      await newNotebook(page, `${task.id}.ipynb`);
      const start = Date.now();
      await startRun(page, task.question, { dataFiles: ['sales.csv'] });
      await expect(stateLine(page)).toHaveAttribute('data-running', 'true');
      const end = await waitForEnd(
        page,
        `${tmpPath}/${task.id}.ipynb`,
        14 * 60 * 1000
      );
      const seconds = (Date.now() - start) / 1000;
      const answer = await kernelAnswer(page);
      const usage = panel(page).locator('.jp-bcc-usage');
      const tokens = async (name: string) =>
        (await usage.count()) ? Number(await usage.getAttribute(name)) || 0 : 0;
      const result: IResult = {
        id: task.id,
        expected: task.expected,
        answer,
        correct: isCorrect(task, answer),
        state: end.state,
        promptTokens: await tokens('data-run-prompt-tokens'),
        completionTokens: await tokens('data-run-completion-tokens'),
        seconds
      };
      fs.appendFileSync(LOG, JSON.stringify(result) + '\n');
    });
  }
});
