/**
 * A kernel restarted (or its variables deleted) while the run was paused: the run itself tells the user
 * which variables are gone and what to do, when it resumes, instead of leaving it to the planner.
 */
import { code, exec, plan, setup, text, withTemplate } from './runnerSetup';

describe('variables lost while the run was paused', () => {
  it('warns on resume, naming the variables the kernel no longer has', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(false), plan(true)],
      generating: [
        [code('a = 1'), exec(), code('b = 2'), exec()],
        [text('x'), text('y')]
      ]
    });
    // Paused in the second behavior: the run has seen `a` and `b` in the kernel when it planned it.
    let applied = 0;
    s.runner.actionApplied.connect(() => {
      if (++applied === 5) {
        s.runner.pause();
      }
    });
    const run = s.runner.start({ task: 't' });
    await s.paused();
    expect(Object.keys(s.driver.variables)).toEqual(['a', 'b']);
    // The user restarts the kernel while the run waits.
    s.driver.variables = {};
    s.runner.resume();
    expect((await run).reason).toBe('completed');
    const lost = s.warnings.filter(w => w.text?.id === 'kernelVariablesGone');
    expect(lost).toHaveLength(1);
    expect(lost[0].message).toBe(
      'Variables no longer in the kernel since the run paused (was it restarted?): a, b. The planner is told; to have them back at once, run the cells that define them again.'
    );
  });

  it('says nothing when the variables are all still there, or when a running run deletes one', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(false), plan(true)],
      generating: [
        [code('a = 1'), exec()],
        [code('del a'), exec(), text('x')]
      ]
    });
    let pauses = 0;
    s.runner.actionApplied.connect((_, applied) => {
      if (applied.index === 1 && pauses++ === 0) {
        s.runner.pause();
      }
    });
    const run = s.runner.start({ task: 't' });
    await s.paused();
    s.runner.resume();
    expect((await run).reason).toBe('completed');
    expect(
      s.warnings.filter(w => w.text?.id === 'kernelVariablesGone')
    ).toEqual([]);
  });
});
