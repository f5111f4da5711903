import {
  acceptDialog,
  dangerDialog,
  dismissDialog,
  waitForDialog
} from '@jupyterlab/testing';
import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import * as React from 'react';
import type { PlanningUsage } from '../../protocol';
import { CommandIDs } from '../../tokens';
import { PlannerLine } from '../components/PlannerLine';
import { UsageLine } from '../components/UsageLine';
import { showRunDialog } from '../runDialog';
import {
  ILlmSettings,
  ILlmSettingsBackend,
  ILlmSettingsUpdate,
  ILlmTestResult,
  showLlmSettingsDialog
} from '../llmSettingsDialog';
import { describeUsage } from '../plannerText';
import { markingTrans } from './markingTranslator';
import { disposeRendered, render, waitFor } from './rendered';

const trans = nullTranslator.load('notebook_bcc');

afterEach(disposeRendered);

const USAGE: PlanningUsage = {
  model: 'gemma',
  behavior: { prompt_tokens: 812, completion_tokens: 143 },
  run: { prompt_tokens: 5120, completion_tokens: 990, model_calls: 7 },
  cost: { run: 0.0123, behavior: 0.001, currency: 'USD' }
};

describe('UsageLine', () => {
  it("shows the last behavior's tokens, the run's totals and the cost", async () => {
    const host = await render(<UsageLine usage={USAGE} trans={trans} />);
    const line = host.querySelector('.jp-bcc-usage')!;
    expect(line.querySelector('.jp-bcc-usage-behavior')?.textContent).toBe(
      'Last behavior: 812 prompt + 143 completion tokens'
    );
    expect(line.querySelector('.jp-bcc-usage-run')?.textContent).toBe(
      'Run: 5,120 prompt + 990 completion tokens in 7 model calls'
    );
    expect(line.querySelector('.jp-bcc-usage-cost')?.textContent).toBe(
      'Cost: 0.0123 USD (last behavior 0.001 USD)'
    );
    expect(line.getAttribute('data-run-prompt-tokens')).toBe('5120');
    expect(line.getAttribute('data-model')).toBe('gemma');
  });

  it('shows no cost when no price was set, and the run alone before a behavior ended', async () => {
    const host = await render(
      <UsageLine
        usage={{
          model: 'gemma',
          run: { prompt_tokens: 700, completion_tokens: 90, model_calls: 1 }
        }}
        trans={trans}
      />
    );
    expect(host.querySelector('.jp-bcc-usage-behavior')).toBeNull();
    expect(host.querySelector('.jp-bcc-usage-cost')).toBeNull();
    expect(host.querySelector('.jp-bcc-usage-run')?.textContent).toBe(
      'Run: 700 prompt + 90 completion tokens in 1 model call'
    );
  });

  it('says every part in the translated words', () => {
    expect(describeUsage(USAGE, markingTrans)).toEqual({
      behavior: '⟦Last behavior: 812 prompt + 143 completion tokens⟧',
      run: '⟦Run: 5,120 prompt + 990 completion tokens in 7 model calls⟧',
      cost: '⟦Cost: 0.0123 USD (last behavior 0.001 USD)⟧',
      estimated: null
    });
  });
});

describe('PlannerLine: the LLM planner', () => {
  const location = {
    via: "the Jupyter server's relay",
    url: 'in-process LLM planner',
    source: 'user',
    llm: {
      model: 'gemma',
      models: ['gemma', 'qwen'],
      base_url: 'http://localhost:8080/v1',
      readonly: false
    }
  };

  it('says "LLM planner: <model>", the model the run used once the planner said so', async () => {
    const commands = new CommandRegistry();
    let host = await render(
      <PlannerLine
        dialect="dslc"
        location={location}
        commands={commands}
        trans={trans}
      />
    );
    expect(host.querySelector('.jp-bcc-planner-dialect')?.textContent).toBe(
      'LLM planner: gemma'
    );
    disposeRendered();
    host = await render(
      <PlannerLine
        dialect="dslc"
        location={location}
        model="qwen"
        commands={commands}
        trans={trans}
      />
    );
    const where = host.querySelector('.jp-bcc-planner-dialect')!;
    expect(where.textContent).toBe('LLM planner: qwen');
    expect(where.getAttribute('title')).toBe(
      'http://localhost:8080/v1, through the Jupyter server'
    );
    expect(
      host.querySelector('.jp-bcc-planner')?.getAttribute('data-llm-model')
    ).toBe('qwen');
  });

  it('opens the LLM Planner Settings', async () => {
    const commands = new CommandRegistry();
    const open = jest.fn();
    commands.addCommand(CommandIDs.llmSettings, {
      label: 'LLM Planner Settings…',
      execute: open
    });
    const host = await render(
      <PlannerLine
        dialect={null}
        location={{ via: 'x', builtin: true }}
        commands={commands}
        trans={trans}
      />
    );
    const link = host.querySelector<HTMLButtonElement>(
      '.jp-bcc-llm-settings-link'
    )!;
    expect(link.textContent).toBe('LLM settings…');
    link.click();
    expect(open).toHaveBeenCalledTimes(1);
  });
});

/** Types into a React-controlled field. */
function type(selector: string, value: string): void {
  const input = document.querySelector<HTMLInputElement>(
    `.jp-Dialog ${selector}`
  )!;
  const setter = Object.getOwnPropertyDescriptor(
    HTMLInputElement.prototype,
    'value'
  )!.set!;
  setter.call(input, value);
  input.dispatchEvent(new Event('input', { bubbles: true }));
}

function field(selector: string): HTMLInputElement {
  return document.querySelector<HTMLInputElement>(`.jp-Dialog ${selector}`)!;
}

async function dialogBody(): Promise<void> {
  await waitForDialog();
  await waitFor(() => field('.jp-bcc-llm-base-url') !== null);
}

function backend(settings: Partial<ILlmSettings> = {}) {
  const stored: ILlmSettings = {
    source: 'none',
    readonly: false,
    base_url: '',
    model: '',
    models: [],
    api_key_set: false,
    ...settings
  };
  return {
    get: jest.fn(async () => stored),
    save: jest.fn(async (update: ILlmSettingsUpdate) => ({
      ...stored,
      source: 'user' as const,
      base_url: update.base_url,
      model: update.model
    })),
    remove: jest.fn(async () => undefined),
    test: jest.fn(async (): Promise<ILlmTestResult> => ({
      ok: true,
      message: 'The model gemma answers at http://localhost:8080/v1'
    }))
  } satisfies ILlmSettingsBackend;
}

describe('showLlmSettingsDialog', () => {
  it('saves the base URL, the model, the other models and the key typed', async () => {
    const server = backend();
    const done = showLlmSettingsDialog(server, trans);
    await dialogBody();
    expect(field('.jp-bcc-llm-api-key').type).toBe('password');
    type('.jp-bcc-llm-base-url', ' http://localhost:8080/v1 ');
    type('.jp-bcc-llm-model-name', 'gemma');
    type('.jp-bcc-llm-models', 'qwen, gemma, ,llama');
    type('.jp-bcc-llm-api-key', 'sk-secret');
    await acceptDialog();
    expect(await done).toBe('saved');
    expect(server.save).toHaveBeenCalledWith({
      base_url: 'http://localhost:8080/v1',
      model: 'gemma',
      models: ['gemma', 'qwen', 'llama'],
      api_key: 'sk-secret'
    });
  });

  it('says a key is stored without showing it, keeps it when the field is left empty, or removes it on request', async () => {
    const stored = {
      source: 'user' as const,
      base_url: 'http://localhost:8080/v1',
      model: 'gemma',
      models: ['gemma', 'qwen'],
      api_key_set: true
    };
    let server = backend(stored);
    let done = showLlmSettingsDialog(server, trans);
    await dialogBody();
    expect(field('.jp-bcc-llm-api-key').value).toBe('');
    expect(field('.jp-bcc-llm-api-key').placeholder).toBe(
      'A key is stored: leave empty to keep it'
    );
    expect(
      document.querySelector('.jp-Dialog .jp-bcc-llm-key-status')?.textContent
    ).toBe(
      'A key is stored on the server. It is never sent back to the browser.'
    );
    expect(field('.jp-bcc-llm-models').value).toBe('qwen');
    await acceptDialog();
    expect(await done).toBe('saved');
    expect(server.save).toHaveBeenCalledWith({
      base_url: 'http://localhost:8080/v1',
      model: 'gemma',
      models: ['gemma', 'qwen']
    });

    server = backend(stored);
    done = showLlmSettingsDialog(server, trans);
    await dialogBody();
    field('.jp-bcc-llm-remove-key').click();
    await waitFor(() => field('.jp-bcc-llm-api-key').disabled);
    await acceptDialog();
    await done;
    expect(server.save.mock.calls[0][0].api_key).toBe('');
  });

  it('tests what is typed without closing, and shows the answer', async () => {
    const server = backend({ api_key_set: true });
    server.test.mockResolvedValueOnce({
      ok: false,
      message: 'The endpoint refused the API key (HTTP 401): check the API key'
    });
    const done = showLlmSettingsDialog(server, trans);
    await dialogBody();
    type('.jp-bcc-llm-base-url', 'http://localhost:8080/v1');
    type('.jp-bcc-llm-model-name', 'gemma');
    document
      .querySelector<HTMLButtonElement>('.jp-Dialog .jp-bcc-llm-test')!
      .click();
    const result = () =>
      document.querySelector('.jp-Dialog .jp-bcc-llm-test-result');
    await waitFor(() => result()?.getAttribute('data-ok') === 'false');
    expect(result()?.textContent).toBe(
      'The endpoint refused the API key (HTTP 401): check the API key'
    );
    // No key typed: the server tests with the stored one.
    expect(server.test).toHaveBeenCalledWith({
      base_url: 'http://localhost:8080/v1',
      model: 'gemma'
    });
    expect(server.save).not.toHaveBeenCalled();
    await dismissDialog();
    expect(await done).toBeNull();
  });

  it('shows the model that answered and offers it when the endpoint serves another', async () => {
    const server = backend({
      source: 'user',
      base_url: 'http://localhost:8080/v1',
      model: 'gpt-4o'
    });
    server.test.mockResolvedValueOnce({
      ok: false,
      message:
        'The endpoint at http://localhost:8080/v1 serves qwen, not gpt-4o: qwen answered',
      model: 'qwen',
      models: ['qwen'],
      served: false
    });
    const done = showLlmSettingsDialog(server, trans);
    await dialogBody();
    document
      .querySelector<HTMLButtonElement>('.jp-Dialog .jp-bcc-llm-test')!
      .click();
    const answered = () =>
      document.querySelector('.jp-Dialog .jp-bcc-llm-test-model');
    await waitFor(() => answered() !== null);
    expect(answered()?.textContent).toBe(
      'Answered by: qwen. The endpoint serves: qwen.'
    );
    document
      .querySelector<HTMLButtonElement>('.jp-Dialog .jp-bcc-llm-use-model')!
      .click();
    await waitFor(() => field('.jp-bcc-llm-model-name').value === 'qwen');
    await acceptDialog();
    expect(await done).toBe('saved');
    expect(server.save.mock.calls[0][0].model).toBe('qwen');
  });

  it('stays open with what was typed and the reason when the server refuses', async () => {
    const server = backend();
    server.save.mockRejectedValueOnce(
      new Error('base_url must be an http(s) URL')
    );
    const done = showLlmSettingsDialog(server, trans);
    await dialogBody();
    type('.jp-bcc-llm-base-url', 'localhost:8080');
    type('.jp-bcc-llm-model-name', 'gemma');
    await acceptDialog();
    await dialogBody();
    await waitFor(
      () => document.querySelector('.jp-Dialog .jp-bcc-llm-error') !== null
    );
    expect(
      document.querySelector('.jp-Dialog .jp-bcc-llm-error')?.textContent
    ).toBe('Save failed: base_url must be an http(s) URL');
    expect(field('.jp-bcc-llm-base-url').value).toBe('localhost:8080');
    await dismissDialog();
    expect(await done).toBeNull();
    expect(server.save).toHaveBeenCalledTimes(1);
  });

  it('asks for the base URL and the model before saving', async () => {
    const server = backend();
    const done = showLlmSettingsDialog(server, trans);
    await dialogBody();
    await acceptDialog();
    await dialogBody();
    await waitFor(
      () => document.querySelector('.jp-Dialog .jp-bcc-llm-error') !== null
    );
    expect(
      document.querySelector('.jp-Dialog .jp-bcc-llm-error')?.textContent
    ).toBe('Give the base URL and the model.');
    await dismissDialog();
    await done;
    expect(server.save).not.toHaveBeenCalled();
  });

  it("removes the user's own settings", async () => {
    const server = backend({
      source: 'user',
      base_url: 'http://localhost:8080/v1',
      model: 'gemma'
    });
    const done = showLlmSettingsDialog(server, trans);
    await dialogBody();
    await dangerDialog();
    expect(await done).toBe('removed');
    expect(server.remove).toHaveBeenCalledTimes(1);
    expect(server.save).not.toHaveBeenCalled();
  });

  it('is read-only when the administrator set it: says so, and can only test', async () => {
    const server = backend({
      source: 'server',
      readonly: true,
      base_url: 'http://vllm.internal:8000/v1',
      model: 'qwen',
      api_key_set: true
    });
    const done = showLlmSettingsDialog(server, trans);
    await dialogBody();
    expect(
      document.querySelector('.jp-Dialog .jp-bcc-llm-source')?.textContent
    ).toBe(
      'Your administrator set the LLM planner: these settings cannot be changed here.'
    );
    for (const selector of [
      '.jp-bcc-llm-base-url',
      '.jp-bcc-llm-model-name',
      '.jp-bcc-llm-models',
      '.jp-bcc-llm-api-key'
    ]) {
      expect(field(selector).disabled).toBe(true);
    }
    expect(field('.jp-bcc-llm-base-url').value).toBe(
      'http://vllm.internal:8000/v1'
    );
    expect(document.querySelector('.jp-Dialog .jp-mod-warn')).toBeNull();
    document
      .querySelector<HTMLButtonElement>('.jp-Dialog .jp-bcc-llm-test')!
      .click();
    await waitFor(() => server.test.mock.calls.length > 0);
    // The administrator's values: none are sent.
    expect(server.test).toHaveBeenCalledWith({});
    await acceptDialog();
    expect(await done).toBeNull();
    expect(server.save).not.toHaveBeenCalled();
  });
});

describe('showRunDialog: the model of the LLM planner', () => {
  const open = (llm: { model: string; models: string[] } | null) =>
    showRunDialog({
      notebookPath: 'work/analysis.ipynb',
      docManager: null,
      translator: nullTranslator,
      trans,
      label: 'analysis.ipynb',
      llm
    });

  async function typeTask(text: string): Promise<void> {
    await waitForDialog();
    const task = document.querySelector<HTMLTextAreaElement>(
      '.jp-Dialog .jp-bcc-task-input'
    )!;
    task.value = text;
    task.dispatchEvent(new Event('input'));
  }

  it('offers the allowed models, the default first chosen, says which runs, and gives the pick', async () => {
    const result = open({ model: 'gemma', models: ['gemma', 'qwen'] });
    await typeTask('Which region sells most?');
    const select = document.querySelector<HTMLSelectElement>(
      '.jp-Dialog select.jp-bcc-llm-model'
    )!;
    expect([...select.options].map(o => o.value)).toEqual(['gemma', 'qwen']);
    expect(select.value).toBe('gemma');
    const note = () =>
      document.querySelector('.jp-Dialog .jp-bcc-llm-model-note')?.textContent;
    expect(note()).toBe('The LLM planner runs this workflow with gemma.');
    select.value = 'qwen';
    select.dispatchEvent(new Event('change'));
    expect(note()).toBe('The LLM planner runs this workflow with qwen.');
    await acceptDialog();
    expect(await result).toEqual({
      task: 'Which region sells most?',
      dataFiles: [],
      stepMode: false,
      llmModel: 'qwen'
    });
  });

  it('runs the default model when there is no other', async () => {
    const result = open({ model: 'gemma', models: [] });
    await typeTask('t');
    const select = document.querySelector<HTMLSelectElement>(
      '.jp-Dialog select.jp-bcc-llm-model'
    )!;
    expect(select.disabled).toBe(true);
    await acceptDialog();
    expect((await result)?.llmModel).toBe('gemma');
  });

  it('has no model choice without the LLM planner', async () => {
    const result = open(null);
    await typeTask('t');
    expect(document.querySelector('.jp-Dialog .jp-bcc-llm-model')).toBeNull();
    await acceptDialog();
    expect(await result).not.toHaveProperty('llmModel');
  });
});
