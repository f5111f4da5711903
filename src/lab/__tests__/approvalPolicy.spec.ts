/**
 * Who decides whether code waits for approval (docs/using.md#approval): the user's interactive mode,
 * the administrator's require_approval (also shown in the Settings Editor), and for the LLM planner the
 * answer to its first run's question.
 */
import type { ServerConnection } from '@jupyterlab/services';
import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import { nullTranslator } from '@jupyterlab/translation';
import { DEFAULT_SETTINGS, type IRunSettings } from '../../engine/settings';
import {
  ApprovalPolicyService,
  confirmLlmRun,
  type IApprovalPolicy,
  readApprovalPolicy,
  withApprovalPolicy
} from '../approvalPolicy';
import { requiredApprovalSchema } from '../requiredApproval';
import { RunSettingsModel } from '../settings';

const trans = nullTranslator.load('notebook_bcc');
const serverSettings = {} as ServerConnection.ISettings;
const LLM = { model: 'qwen', models: ['qwen'], base_url: 'http://x/v1' };

describe('withApprovalPolicy', () => {
  const nothing: IApprovalPolicy = {
    requireApproval: false,
    llmPlanner: false
  };
  const llm: IApprovalPolicy = { requireApproval: false, llmPlanner: true };
  const required: IApprovalPolicy = {
    requireApproval: true,
    llmPlanner: false
  };
  // [the user's interactive, llmCodeApproval, transport, policy] -> interactive for the run
  const table: [
    boolean,
    IRunSettings['llmCodeApproval'],
    IRunSettings['transport'],
    IApprovalPolicy | null,
    boolean
  ][] = [
    [false, 'ask-first', 'server', null, false],
    [false, 'ask-first', 'server', nothing, false],
    [true, 'run', 'server', nothing, true],
    [false, 'run', 'server', required, true],
    [false, 'ask-first', 'server', llm, true],
    [false, 'ask', 'server', llm, true],
    [false, 'run', 'server', llm, false],
    [false, 'ask', 'browser', llm, false]
  ];
  it.each(table)(
    'interactive %s, LLM answer %s, %s transport, policy %j: %s',
    (interactive, llmCodeApproval, transport, policy, expected) => {
      const settings = {
        ...DEFAULT_SETTINGS,
        interactive,
        llmCodeApproval,
        transport
      };
      expect(withApprovalPolicy(settings, policy).interactive).toBe(expected);
    }
  );

  it('a run uses the policy as soon as the server answered', () => {
    const model = new RunSettingsModel();
    model.update({ interactive: false });
    expect(model.current.interactive).toBe(false);
    model.setPolicy(required);
    expect(model.current.interactive).toBe(true);
    // The user's own setting does not undo it.
    model.update({ interactive: false });
    expect(model.current.interactive).toBe(true);
  });
});

describe('the server’s answer', () => {
  it('reads require_approval and whether the LLM planner serves', () => {
    expect(readApprovalPolicy({ require_approval: true })).toEqual({
      requireApproval: true,
      llmPlanner: false
    });
    expect(readApprovalPolicy({ require_approval: 'yes', llm: LLM })).toEqual({
      requireApproval: false,
      llmPlanner: true
    });
    expect(readApprovalPolicy(null)).toEqual({
      requireApproval: false,
      llmPlanner: false
    });
  });

  it('is asked again when the LLM settings change, and tells what changed', async () => {
    const bodies: unknown[] = [{}, { require_approval: true }];
    const service = new ApprovalPolicyService({
      serverSettings,
      fetchConfig: async () => bodies.shift()
    });
    const seen: IApprovalPolicy[] = [];
    service.changed.connect((_, policy) => seen.push(policy));
    await service.refresh();
    await service.refresh();
    expect(seen).toEqual([
      { requireApproval: false, llmPlanner: false },
      { requireApproval: true, llmPlanner: false }
    ]);
    expect(service.current?.requireApproval).toBe(true);
    service.dispose();
  });
});

describe('the Settings Editor when the administrator requires approval', () => {
  const plugin = {
    id: 'jupyterlab-notebook-bcc:plugin',
    schema: {
      type: 'object',
      properties: {
        interactive: {
          title: 'Interactive mode',
          description: 'Show each behavior.',
          type: 'boolean',
          default: false
        },
        llmCodeApproval: { title: 'LLM', type: 'string', default: 'ask-first' },
        baseUrl: { title: 'Planner URL', type: 'string', default: '' }
      }
    }
  } as unknown as ISettingRegistry.IPlugin;

  it('shows interactive mode on, read-only, and says why', () => {
    const schema = requiredApprovalSchema(plugin, trans).schema.properties!;
    expect(schema.interactive).toMatchObject({
      title: 'Interactive mode (required by your administrator)',
      default: true,
      readOnly: true
    });
    expect(schema.interactive.description).toMatch(
      /^Your administrator requires approval .*c\.NotebookBCC\.require_approval.* Show each behavior\.$/
    );
    expect(schema.llmCodeApproval.readOnly).toBe(true);
    expect(schema.baseUrl).toEqual(plugin.schema.properties!.baseUrl);
  });
});

describe("the LLM planner's first-run question", () => {
  async function confirm(
    settings: Partial<IRunSettings>,
    config: unknown,
    answer: 'ask' | 'run' | null = 'run'
  ) {
    const asked = jest.fn(async () => answer);
    const remembered: string[] = [];
    const result = await confirmLlmRun({
      serverSettings,
      settings: async () => ({ ...DEFAULT_SETTINGS, ...settings }),
      remember: async value => {
        remembered.push(value);
      },
      trans,
      fetchConfig: async () => config,
      ask: asked
    });
    return { result, asked: asked.mock.calls.length, remembered };
  }

  it('asks once the LLM planner serves, and remembers the answer', async () => {
    expect(await confirm({}, { llm: LLM }, 'ask')).toEqual({
      result: true,
      asked: 1,
      remembered: ['ask']
    });
    expect(await confirm({}, { llm: LLM }, null)).toEqual({
      result: false,
      asked: 1,
      remembered: []
    });
  });

  it('does not ask another planner, an answered question, approval already on or required', async () => {
    for (const [settings, config] of [
      [{}, {}],
      [{ llmCodeApproval: 'run' }, { llm: LLM }],
      [{ llmCodeApproval: 'ask' }, { llm: LLM }],
      [{ interactive: true }, { llm: LLM }],
      [{ transport: 'browser' }, { llm: LLM }],
      [{}, { llm: LLM, require_approval: true }]
    ] as [Partial<IRunSettings>, unknown][]) {
      expect(await confirm(settings, config)).toEqual({
        result: true,
        asked: 0,
        remembered: []
      });
    }
  });
});
