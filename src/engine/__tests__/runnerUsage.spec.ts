import type { PlanningUsage } from '../../protocol';
import { snapshotFromSaved } from '../snapshot';
import { FakeNotebookDriver } from '../testing';
import {
  newState,
  plan,
  restoredState,
  saved,
  setup,
  text,
  withTemplate
} from './runnerSetup';

const FIRST: PlanningUsage = {
  model: 'gemma',
  run: { prompt_tokens: 700, completion_tokens: 90, model_calls: 1 }
};
const SECOND: PlanningUsage = {
  model: 'gemma',
  behavior: { prompt_tokens: 812, completion_tokens: 143 },
  run: { prompt_tokens: 5120, completion_tokens: 990, model_calls: 7 },
  cost: { run: 0.0123, behavior: 0.001, currency: 'USD' }
};

describe('WorkflowRunner: the LLM planner usage', () => {
  it('shows the latest usage of the planning answers in the snapshot', async () => {
    const s = setup({
      planning: [
        withTemplate(false, undefined, { usage: FIRST }),
        plan(true, { usage: SECOND })
      ],
      generating: [[text('one')]]
    });
    const seen: (PlanningUsage | undefined)[] = [];
    s.runner.progressChanged.connect((_, snapshot) =>
      seen.push(snapshot.usage)
    );
    await s.runner.start({ task: 't' });
    expect(seen).toContainEqual(FIRST);
    expect(s.runner.snapshot.usage).toEqual(SECOND);
  });

  it('keeps the usage when a later answer says nothing of it', async () => {
    const s = setup({
      planning: [withTemplate(false, undefined, { usage: SECOND }), plan(true)],
      generating: [[text('one')]]
    });
    await s.runner.start({ task: 't' });
    expect(s.runner.snapshot.usage).toEqual(SECOND);
  });

  it('has no usage when the planner never sends one (the demo planner, other servers)', async () => {
    const s = setup({ planning: [withTemplate(true)] });
    await s.runner.start({ task: 't' });
    expect(s.runner.snapshot).not.toHaveProperty('usage');
    expect(saved(s.driver)).not.toHaveProperty('usage');
  });

  it('saves the usage with the run: a reloaded notebook shows it, and a resumed run keeps it', async () => {
    const driver = new FakeNotebookDriver();
    const s = setup(
      {
        planning: [withTemplate(false, undefined, { usage: SECOND })],
        generating: [new Error('down')]
      },
      { driver }
    );
    await s.runner.start({ task: 't' });
    expect(saved(driver).usage).toEqual(SECOND);
    expect(snapshotFromSaved(saved(driver), 10).usage).toEqual(SECOND);

    const later = setup({ planning: [plan(true)] }, { driver });
    await later.runner.resumeFromSaved();
    expect(later.runner.snapshot.usage).toEqual(SECOND);
    expect(saved(driver).usage).toEqual(SECOND);
  });

  it('leaves out a saved usage it cannot read, and the run is still resumable', () => {
    const good = newState().toJSON();
    const state = restoredState({
      ...good,
      usage: { run: { prompt_tokens: 'many' } } as unknown as PlanningUsage
    });
    expect(state.usage).toBeNull();
    expect(state.toJSON()).not.toHaveProperty('usage');
  });

  it('forgets the usage when a new run starts', async () => {
    const s = setup({
      planning: [withTemplate(true, undefined, { usage: SECOND }), plan(true)]
    });
    await s.runner.start({ task: 't' });
    expect(s.runner.snapshot.usage).toEqual(SECOND);
    await s.runner.start({ task: 'again' });
    expect(s.runner.snapshot.usage).toBeUndefined();
  });
});

describe('WorkflowRunner: the model a run picked', () => {
  it('sends llm_model in every request, whatever the kernel holds', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [[text('one')]]
    });
    s.driver.variables = { llm_model: 'from the kernel' };
    await s.runner.start({ task: 't', llmModel: 'qwen2.5-7b' });
    const planning = s.client.planningRequests.map(
      r => r.observation.context?.variables?.llm_model
    );
    const generating = s.client.generatingRequests.map(
      r => r.observation.context?.variables?.llm_model
    );
    expect(planning).toEqual(['qwen2.5-7b', 'qwen2.5-7b']);
    expect(generating).toEqual(['qwen2.5-7b']);
    expect(saved(s.driver).contextVariables.llm_model).toBe('qwen2.5-7b');
  });

  it('sends no llm_model when none was picked', async () => {
    const s = setup({ planning: [withTemplate(true)] });
    await s.runner.start({ task: 't' });
    expect(
      s.client.planningRequests[0].observation.context?.variables
    ).not.toHaveProperty('llm_model');
  });
});
