import type { IProgressState } from '../../engine/state/progressState';
import { buildTree, CompletedItems, trackOutputs } from '../tree';
import {
  progressInImputeStep,
  progressInMissingStep,
  runningSnapshot,
  snapshot
} from './snapshots';

describe('buildTree: stages > steps > behaviors', () => {
  const completed = new CompletedItems();
  completed.observe(progressInMissingStep());
  const progress = progressInImputeStep();
  completed.observe(progress);
  const tree = buildTree(runningSnapshot(), progress, completed);

  it('tells a running behavior from one a stopped run left unfinished', () => {
    const current = tree[1].steps[1].behaviors[2];
    expect(current.running).toBe(true);
    const stopped = buildTree(
      runningSnapshot({ state: 'IDLE', running: false }),
      progress,
      completed
    );
    expect(stopped[1].steps[1].behaviors[2]).toMatchObject({
      status: 'current',
      running: false
    });
  });

  it('marks stages and steps completed, current or remaining, with their goals', () => {
    expect(tree.map(s => [s.id, s.status, s.goal])).toEqual([
      ['loading', 'completed', 'Get the data in.'],
      ['cleaning', 'current', 'Clean it.'],
      ['findings', 'remaining', null]
    ]);
    expect(tree[1].steps.map(s => [s.id, s.status, s.goal])).toEqual([
      ['missing', 'completed', 'Count the gaps.'],
      ['impute', 'current', 'Fill the gaps.']
    ]);
    expect(tree[2].steps[0].status).toBe('remaining');
  });

  it('gives the focus text of the current stage and step only', () => {
    expect(tree[1].focus).toBe('Clean **carefully**.');
    expect(tree[1].steps[1].focus).toBe(
      'Impute the *numeric* columns with the median.'
    );
    expect(tree[0].focus).toBeNull();
    expect(tree[1].steps[0].focus).toBeNull();
  });

  it('gives each stage and step the planner’s latest assessment of it, current or not', () => {
    expect(tree[1].steps[0].assessment).toEqual({
      reasoning: 'Every column was counted.'
    });
    expect(tree[1].assessment).toEqual({ percent: 50 });
    expect(tree[1].steps[1].assessment).toBeNull();
    expect(tree[0].assessment).toBeNull();
  });

  it('keeps the completed behaviors of earlier steps with goal, outputs and time', () => {
    const [behavior] = tree[1].steps[0].behaviors;
    expect(behavior).toMatchObject({
      id: 'behavior_001',
      iteration: 1,
      status: 'completed',
      goal: 'Count the missing values per column',
      produced: ['missing_summary'],
      durationMs: 2500
    });
  });

  it('lists the current step behaviors in order, the running one current with its goal', () => {
    const behaviors = tree[1].steps[1].behaviors;
    expect(behaviors.map(b => [b.iteration, b.status])).toEqual([
      [1, 'completed'],
      [2, 'completed'],
      [3, 'current']
    ]);
    expect(behaviors[0].goal).toBe('Try the median');
    expect(behaviors[2].goal).toBe('Try the mode for categories');
    expect(behaviors[2].durationMs).toBeNull();
  });

  it('records what completed stages and steps produced', () => {
    expect(tree[0].produced).toEqual(['df']);
    expect(tree[1].steps[0].produced).toEqual(['missing_summary']);
  });

  it('lists the latest artifact of each variable the behaviors seen produced', () => {
    expect(completed.artifacts().map(a => a.artifact_id)).toEqual([
      'df@loading',
      'missing_summary@behavior_001'
    ]);
  });

  it('lists the same artifacts for a run read back, whose earlier behaviors are gone', () => {
    const artifact = (name: string, source: string) => ({
      artifact_id: `${name}@${source}`,
      variable_name: name,
      source
    });
    // Saved: the completed stage and step list what their behaviors produced.
    const saved = {
      stages: {
        current: 'clean',
        completed: [
          {
            stage_id: 'load',
            outputs_produced: { artifacts: [artifact('df', 'load')] }
          }
        ]
      },
      steps: {
        current: 'impute',
        completed: [
          {
            step_id: 'count',
            outputs_produced: {
              artifacts: [artifact('missing', 'behavior_001')]
            }
          }
        ]
      },
      behaviors: { completed: [] }
    } as unknown as IProgressState;
    const reloaded = new CompletedItems();
    reloaded.observe(saved);
    expect(reloaded.artifacts().map(a => a.variable_name)).toEqual([
      'df',
      'missing'
    ]);
  });

  it('is empty before a template is known', () => {
    expect(buildTree(snapshot(), null, new CompletedItems())).toEqual([]);
  });
});

describe('trackOutputs', () => {
  it('marks each expected variable produced, in progress or missing', () => {
    expect(trackOutputs(runningSnapshot())).toEqual([
      { name: 'missing_summary', status: 'produced' },
      { name: 'df_clean', status: 'in_progress' }
    ]);
    const later = runningSnapshot();
    later.outputs.steps.expected.push('imputation_log');
    expect(trackOutputs(later)).toContainEqual({
      name: 'imputation_log',
      status: 'missing'
    });
  });
});
