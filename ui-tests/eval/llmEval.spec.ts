/**
 * `make eval` (docs/eval.md): each closed-form question run through the whole extension in a real browser,
 * answered by the LLM planner on the configured endpoint: the project's own set (tasks.ts) and
 * InfiAgent-DABench (scripts/dabench.py: the subset, the task text, the official scoring). Each question's
 * result is appended to eval-results/eval.jsonl as soon as it is known, and its notebook is saved in
 * eval-results/notebooks/. Not part of `make test`: it judges a model and the planner, not the code.
 */
import { galata } from '@jupyterlab/galata';
import type { Page } from '@playwright/test';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import {
  command,
  expect,
  installProbe,
  newNotebook,
  panel,
  PLUGIN,
  runInfo,
  savedNotebook,
  startRun,
  stateLine,
  test
} from '../tests/helpers';
import type { IRunInfo } from '../tests/helpers';
import { evalTasks, isCorrect, salesCsv, salesRows } from './tasks';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const { LOG, NOTEBOOKS } = require('./paths');
// eslint-disable-next-line @typescript-eslint/no-var-requires
const { EVAL_MODEL } = require('../llm-servers');

const REPO = path.resolve(__dirname, '../..');
const PYTHON = process.env.BCC_EVAL_PYTHON || 'python3';
const MINUTES = Number(process.env.BCC_EVAL_MINUTES || 40);
const MODEL = process.env.BCC_EVAL_MODEL || EVAL_MODEL;
const ENDPOINT = process.env.BCC_EVAL_BASE_URL || 'local llama.cpp';

interface IVariable {
  type: string;
  value: string;
  json: string;
}

interface IAnswer {
  name: string;
  expected: string;
  got: string | null;
  right: boolean;
  kernel?: string | null;
  kernelType?: string | null;
  kernelRight?: boolean;
}

/** One question, whichever set it comes from. */
interface IQuestion {
  set: 'own' | 'dabench';
  id: string;
  level: string;
  task: string;
  /** The data file the run is given, by its name beside the notebook. */
  fileName: string;
  /** A file to upload (DABench's table), or the text to upload (the own set's generated CSV). */
  file?: string;
  content?: string;
  names: string[];
  expected: Record<string, string>;
}

function csvList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map(item => item.trim())
    .filter(Boolean);
}

const SET = process.env.BCC_EVAL_SET || 'all';
const IDS = csvList(process.env.BCC_EVAL_IDS);
const ROWS = salesRows();
const OWN = evalTasks(ROWS);

function ownQuestions(): IQuestion[] {
  if (!['own', 'all'].includes(SET) && IDS.length === 0) {
    return [];
  }
  return OWN.filter(task => (IDS.length ? IDS.includes(task.id) : true)).map(
    task => ({
      set: 'own',
      id: task.id,
      level: 'own',
      task: task.question,
      fileName: 'sales.csv',
      content: salesCsv(ROWS),
      names: ['answer'],
      expected: { answer: String(task.expected) }
    })
  );
}

/** DABench's selected questions, from scripts/dabench.py (which reads the data and the selection). */
function dabenchQuestions(): IQuestion[] {
  const out = execFileSync(PYTHON, ['scripts/dabench.py', 'tasks'], {
    cwd: REPO,
    env: process.env,
    encoding: 'utf-8',
    maxBuffer: 64 * 1024 * 1024
  });
  return JSON.parse(out) as IQuestion[];
}

function gitCommit(): string {
  try {
    const git = (args: string[]) =>
      execFileSync('git', args, { cwd: REPO, encoding: 'utf-8' }).trim();
    const dirty = git(['status', '--porcelain', '--untracked-files=no']);
    return git(['rev-parse', '--short', 'HEAD']) + (dirty ? '+changes' : '');
  } catch {
    return 'unknown';
  }
}

const LIMIT = Number(process.env.BCC_EVAL_LIMIT || 0);
const ALL = [...ownQuestions(), ...dabenchQuestions()];
const QUESTIONS = LIMIT > 0 ? ALL.slice(0, LIMIT) : ALL;
const COMMIT = gitCommit();

/** The kernel's variables of these names: type, a short text of the value, and its JSON (null: missing). */
async function kernelVariables(
  page: Page,
  names: string[]
): Promise<Record<string, IVariable | null>> {
  const code = [
    'import json as _bcc_json',
    '_bcc_found = {}',
    `for _bcc_name in ${JSON.stringify(names)}:`,
    '    if _bcc_name not in globals():',
    '        _bcc_found[_bcc_name] = None',
    '        continue',
    '    _bcc_value = globals()[_bcc_name]',
    '    _bcc_type = type(_bcc_value).__name__',
    '    try:',
    '        _bcc_value = _bcc_value.item() if hasattr(_bcc_value, "item") else _bcc_value',
    '    except Exception:',
    '        pass',
    '    if not isinstance(_bcc_value, (int, float, str, bool)):',
    '        _bcc_value = str(_bcc_value)[:300]',
    '    _bcc_found[_bcc_name] = {"type": _bcc_type, "value": str(_bcc_value), "json": _bcc_json.dumps(_bcc_value)}',
    'print("BCC_VARIABLES=" + _bcc_json.dumps(_bcc_found))',
    'del _bcc_json, _bcc_found, _bcc_name',
    'try:',
    '    del _bcc_value, _bcc_type',
    'except NameError:',
    '    pass'
  ].join('\n');
  const text = await page.evaluate(async code => {
    const widget = window.jupyterapp.shell.currentWidget as unknown as {
      sessionContext: {
        session: {
          kernel: {
            requestExecute(content: {
              code: string;
              store_history?: boolean;
            }): {
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
      code,
      store_history: false
    });
    let out = '';
    future.onIOPub = msg => {
      if (msg.header.msg_type === 'stream') {
        out += msg.content.text ?? '';
      }
    };
    // A kernel that does not answer in a minute (dead, or still busy after a stopped run) reads as
    // holding none of the variables.
    await Promise.race([
      future.done,
      new Promise(resolve => setTimeout(resolve, 60000))
    ]);
    return out;
  }, code);
  const line = text.split('\n').find(l => l.startsWith('BCC_VARIABLES='));
  return line
    ? (JSON.parse(line.slice('BCC_VARIABLES='.length)) as Record<
        string,
        IVariable | null
      >)
    : Object.fromEntries(names.map(name => [name, null]));
}

/** Waits for the run's end for up to `minutes`; a run still going then is stopped and said so. */
/**
 * Code the engine flags (it reaches outside the notebook: the environment, a shell, a package install, the
 * network) waits for approval even when the model's code runs without asking (docs/using.md#approval).
 * No one is there to read it: the eval answers Skip, as a careful user would, and counts it.
 */
async function skipHeldCode(page: Page): Promise<number> {
  const dialog = page.locator('.jp-Dialog', {
    has: page.locator('.jp-bcc-approval')
  });
  if (!(await dialog.count())) {
    return 0;
  }
  await dialog.getByRole('button', { name: 'Skip' }).click();
  return 1;
}

async function endOfRun(
  page: Page,
  notebook: string,
  minutes: number
): Promise<{ info: IRunInfo; timedOut: boolean; skipped: number }> {
  const deadline = Date.now() + minutes * 60 * 1000;
  let skipped = 0;
  while (Date.now() < deadline) {
    const info = await runInfo(page, notebook);
    if (!info.running) {
      return { info, timedOut: false, skipped };
    }
    skipped += await skipHeldCode(page);
    await page.waitForTimeout(1000);
  }
  await command(page, 'notebook-bcc:stop', { interruptKernel: true });
  await expect
    .poll(async () => (await runInfo(page, notebook)).running, {
      timeout: 120000
    })
    .toBe(false);
  return { info: await runInfo(page, notebook), timedOut: true, skipped };
}

function recorded(question: IQuestion): boolean {
  if (!fs.existsSync(LOG)) {
    return false;
  }
  return fs
    .readFileSync(LOG, 'utf-8')
    .split('\n')
    .filter(line => line.trim())
    .some(line => {
      const row = JSON.parse(line) as { set: string; id: string };
      return row.set === question.set && row.id === question.id;
    });
}

function scoreOwn(question: IQuestion, answer: IVariable | null) {
  const task = OWN.find(t => t.id === question.id)!;
  const right = isCorrect(task, answer ? answer.json : null);
  const answers: IAnswer[] = [
    {
      name: 'answer',
      expected: question.expected.answer,
      got: answer ? answer.value : null,
      right,
      kernel: answer ? answer.value : null,
      kernelType: answer ? answer.type : null,
      kernelRight: right
    }
  ];
  return { answers, allRight: right, fraction: right ? 1 : 0, report: '' };
}

function scoreDabench(
  question: IQuestion,
  notebook: string,
  kernel: Record<string, IVariable | null>
): { answers: IAnswer[]; allRight: boolean; fraction: number; report: string } {
  const out = execFileSync(PYTHON, ['scripts/dabench.py', 'score'], {
    cwd: REPO,
    env: process.env,
    encoding: 'utf-8',
    input: JSON.stringify({ id: question.id, notebook, kernel })
  });
  return JSON.parse(out);
}

// The extension's settings: its defaults, with the LLM planner's first-run question answered "Run the
// model's code without asking" (no one is there to approve each step), or what BCC_EVAL_SETTINGS (JSON)
// says, e.g. a longer `firstByteTimeout` for a model server that others use too.
test.use({
  mockSettings: {
    ...galata.DEFAULT_SETTINGS,
    [PLUGIN]: {
      llmCodeApproval: 'run',
      ...JSON.parse(process.env.BCC_EVAL_SETTINGS || '{}')
    }
  }
});

test.describe('make eval', () => {
  test.beforeAll(() => {
    fs.mkdirSync(NOTEBOOKS, { recursive: true });
  });

  test.beforeEach(async ({ page }) => {
    await installProbe(page);
  });

  for (const question of QUESTIONS) {
    test(`${question.set} ${question.id} (${question.level})`, async ({
      page,
      tmpPath
    }) => {
      test.skip(
        process.env.BCC_EVAL_RESUME === '1' && recorded(question),
        'already in eval.jsonl'
      );
      test.setTimeout((MINUTES + 10) * 60 * 1000);
      const target = `${tmpPath}/${question.fileName}`;
      if (question.file) {
        await page.contents.uploadFile(question.file, target);
      } else {
        await page.contents.uploadContent(
          question.content ?? '',
          'text',
          target
        );
      }
      const name = `${question.set}-${question.id}.ipynb`;
      const notebook = `${tmpPath}/${name}`;
      await newNotebook(page, name);
      const started = Date.now();
      const startedAt = new Date(started).toISOString();
      await startRun(page, question.task, { dataFiles: [question.fileName] });
      await expect(stateLine(page)).toHaveAttribute('data-running', 'true');
      const { info, timedOut, skipped } = await endOfRun(
        page,
        notebook,
        MINUTES
      );
      const seconds = (Date.now() - started) / 1000;
      const kernel = await kernelVariables(page, question.names);
      const usage = panel(page).locator('.jp-bcc-usage');
      const attribute = async (name: string) =>
        (await usage.count()) ? await usage.getAttribute(name) : null;
      const panelState = (await stateLine(page).textContent()) ?? '';
      const panelText = ((await panel(page).innerText()) ?? '').slice(0, 3000);
      // The notebook as the run left it, saved, then kept beside the results.
      await command(page, 'docmanager:save');
      const saved = path.join(
        NOTEBOOKS,
        `${question.set}-${question.id}.ipynb`
      );
      fs.writeFileSync(
        saved,
        JSON.stringify(await savedNotebook(page, notebook), null, 1)
      );
      // What the user saw at the end, beside the notebook: the panel and the notebook's last cells.
      await page.screenshot({ path: saved.replace(/\.ipynb$/, '.png') });
      const scored =
        question.set === 'own'
          ? scoreOwn(question, kernel.answer ?? null)
          : scoreDabench(question, saved, kernel);
      const result = {
        set: question.set,
        id: question.id,
        level: question.level,
        expected: question.expected,
        got: Object.fromEntries(scored.answers.map(a => [a.name, a.got])),
        ...scored,
        kernel,
        state: timedOut ? 'TIMEOUT' : info.state,
        panelState,
        error: info.error,
        finished: info.finished,
        warnings: info.warnings,
        heldCodeSkipped: skipped,
        panelText,
        promptTokens: Number(await attribute('data-run-prompt-tokens')) || 0,
        completionTokens:
          Number(await attribute('data-run-completion-tokens')) || 0,
        tokensEstimated: (await attribute('data-estimated')) === 'true',
        seconds,
        model: MODEL,
        answeredBy: await attribute('data-model'),
        endpoint: ENDPOINT,
        commit: COMMIT,
        startedAt,
        task: question.task,
        notebook: path.relative(path.dirname(LOG), saved),
        screenshot: path.relative(
          path.dirname(LOG),
          saved.replace(/\.ipynb$/, '.png')
        )
      };
      fs.appendFileSync(LOG, JSON.stringify(result) + '\n');
    });
  }
});
