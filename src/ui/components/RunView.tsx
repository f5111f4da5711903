import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { CommandRegistry } from '@lumino/commands';
import * as React from 'react';
import { CommandIDs, IRunModel } from '../../tokens';
import { describeRun, stepNameOf } from '../present';
import { shownOutcome } from '../outcome';
import { ControlBar } from './ControlBar';
import { RunDeliverables } from './Deliverables';
import { EffectsSection } from './EffectsSection';
import { OutputsSection } from './OutputsSection';
import { PlannerLine } from './PlannerLine';
import { type IProgressSectionProps, ProgressSection } from './ProgressSection';
import { RunElsewhere } from './RunElsewhere';
import { RunError } from './RunError';
import { SavedRunProblem } from './SavedRunProblem';
import { StartProblem } from './StartProblem';
import { TraceLink } from './TraceLink';
import { RewindNote } from './RewindNote';
import { UsageLine } from './UsageLine';
import { WaitingLine } from './WaitingLine';
import { WarningsSection } from './WarningsSection';
import { openStepMenu } from '../stepMenu';
import { Reproducibility } from './Reproducibility';

export interface IRunViewProps {
  /** The notebook's run. */
  model: IRunModel;
  /** Every button executes one of these commands. */
  commands: CommandRegistry;
  rendermime: IRenderMimeRegistry;
  trans: TranslationBundle;
}

/** How a completed run with a contract or steps given up ended, for the state line's colour. */
function endedWith(snapshot: IRunModel['snapshot']): string | undefined {
  const outcome = shownOutcome(snapshot);
  return snapshot.state === 'WORKFLOW_COMPLETED' && outcome
    ? outcome.ok
      ? 'ok'
      : 'problems'
    : undefined;
}

/** "Attempts…" on the steps whose rewritten cells keep attempts (the command knows which). */
function stepAttempts(
  commands: CommandRegistry
): IProgressSectionProps['attempts'] {
  return {
    has: stepId => commands.isVisible(CommandIDs.showAttempts, { stepId }),
    onShow: stepId => {
      void commands.execute(CommandIDs.showAttempts, { stepId });
    }
  };
}

/** The progress tree, with each step's Redo from here, its menu and the user's notes. */
function RunProgress(props: IRunViewProps): JSX.Element {
  const { model, commands, rendermime, trans } = props;
  const snapshot = model.snapshot;
  const rewind = snapshot.rewind;
  return (
    <ProgressSection
      snapshot={snapshot}
      tree={model.tree}
      rendermime={rendermime}
      trans={trans}
      notes={model.stepNotes}
      attempts={stepAttempts(commands)}
      onStepMenu={(stageId, stepId, anchor, byKeyboard) =>
        openStepMenu(commands, trans, { stageId, stepId }, anchor, byKeyboard)
      }
      redo={
        rewind && model.canRewind
          ? {
              steps: rewind.redoSteps,
              onRedo: (stageId, stepId) => {
                void commands.execute(CommandIDs.redoFromStep, {
                  stageId,
                  stepId
                });
              }
            }
          : undefined
      }
    />
  );
}

/** One notebook's run: its state, task, controls, error, progress, outputs, warnings and effects. */
export function RunView(props: IRunViewProps): JSX.Element {
  const { model, commands, trans } = props;
  const snapshot = model.snapshot;
  const available = model.availability;
  const startProblem = snapshot.running ? null : model.startProblem;
  const state = startProblem
    ? trans.__('The run could not start')
    : describeRun(snapshot, trans, {
        awaitingApproval: model.awaitingApproval,
        finished: model.finished
      });
  const error = snapshot.error;
  const waiting =
    (snapshot.paused || snapshot.pausing) && snapshot.bufferedActions > 0
      ? trans._n(
          '%1 cell from the planner waits until you resume',
          '%1 cells from the planner wait until you resume',
          snapshot.bufferedActions
        )
      : null;
  const paused = snapshot.running && (snapshot.paused || snapshot.pausing);
  const elsewhere = model.lockState.kind === 'other';
  const rewind = snapshot.rewind;
  return (
    <>
      <div
        hidden={elsewhere}
        className={`jp-bcc-state jp-bcc-state-${snapshot.state.toLowerCase()}`}
        role="status"
        aria-live="polite"
        data-state={snapshot.state}
        data-running={snapshot.running}
        data-paused={snapshot.paused}
        data-outcome={endedWith(snapshot)}
      >
        {state}
      </div>
      {model.waitingSince !== null ? (
        <WaitingLine since={model.waitingSince} trans={trans} />
      ) : null}
      {waiting ? <div className="jp-bcc-buffered">{waiting}</div> : null}
      <RunElsewhere
        lock={model.lockState}
        canTakeOver={model.canTakeOver}
        commands={commands}
        trans={trans}
      />
      {model.savedRunProblems ? (
        <SavedRunProblem
          problems={model.savedRunProblems}
          canDiscard={model.canDiscardSaved}
          commands={commands}
          trans={trans}
        />
      ) : null}
      {model.source === 'saved' && available.resume ? (
        <div className="jp-bcc-hint">
          {trans.__(
            'This notebook holds a run that was not finished. Resume continues it from the current step.'
          )}
        </div>
      ) : null}
      {snapshot.task && !elsewhere ? (
        <div className="jp-bcc-task" title={snapshot.task}>
          <span className="jp-bcc-label">{trans.__('Task:')}</span>{' '}
          {snapshot.task}
        </div>
      ) : null}
      {elsewhere ? null : <RunDeliverables snapshot={snapshot} trans={trans} />}
      <ControlBar
        commands={commands}
        trans={trans}
        snapshot={snapshot}
        available={available}
        paused={paused}
        canUndo={
          rewind && model.source !== 'none'
            ? model.canRewind && rewind.undo !== null
            : undefined
        }
      />
      {rewind?.last ? (
        <RewindNote
          record={rewind.last}
          stepName={stepNameOf(snapshot, rewind.last.stepId)}
          trans={trans}
        />
      ) : null}
      <PlannerLine
        dialect={snapshot.plannerDialect}
        location={model.plannerLocation}
        model={snapshot.usage?.model}
        commands={commands}
        trans={trans}
      />
      {snapshot.usage ? (
        <UsageLine usage={snapshot.usage} trans={trans} />
      ) : null}
      {startProblem ? (
        <StartProblem
          problem={startProblem}
          location={model.plannerLocation}
          commands={commands}
          trans={trans}
        />
      ) : null}
      {error ? (
        <RunError
          error={error}
          canRetry={available.retry}
          commands={commands}
          trans={trans}
        />
      ) : null}
      <RunProgress {...props} />
      {elsewhere ? null : (
        <Reproducibility
          state={model.reproducibility}
          canCheck={commands.isEnabled(CommandIDs.checkReproducibility)}
          commands={commands}
          trans={trans}
        />
      )}
      <OutputsSection
        outputs={model.outputs}
        artifacts={model.artifacts}
        trans={trans}
      />
      <WarningsSection warnings={model.warnings} trans={trans} />
      <EffectsSection effects={model.effects} trans={trans} />
      {commands.isEnabled(CommandIDs.exportTrace) ? (
        <TraceLink commands={commands} trans={trans} />
      ) : null}
    </>
  );
}
