import type { TranslationBundle } from '@jupyterlab/translation';
import {
  LabIcon,
  pauseIcon,
  runIcon,
  stepOverIcon,
  stopIcon,
  undoIcon
} from '@jupyterlab/ui-components';
import type { CommandRegistry } from '@lumino/commands';
import * as React from 'react';
import type { IRunSnapshot } from '../../engine/types';
import { CommandIDs, ICommandAvailability } from '../../tokens';
import { CommandButton } from './CommandButton';

/** What the control buttons depend on. */
interface IControlState {
  snapshot: IRunSnapshot;
  available: ICommandAvailability;
  /** Running, and paused or about to pause. */
  paused: boolean;
}

interface IControl {
  id: string;
  label: (trans: TranslationBundle) => string;
  icon: LabIcon;
  enabled: keyof ICommandAvailability;
  /** Shown in this state; always when absent. */
  shown?: (state: IControlState) => boolean;
  primary?: (state: IControlState) => boolean;
}

/** Resume takes Pause's place while the run is paused or can be resumed. */
const showsResume = ({ snapshot, available, paused }: IControlState) =>
  paused || (!snapshot.running && available.resume);

/** The controls, in order. */
const CONTROLS: IControl[] = [
  {
    id: CommandIDs.run,
    label: trans => trans.__('Run'),
    icon: runIcon,
    enabled: 'run',
    primary: ({ snapshot, available }) =>
      !snapshot.running && !available.resume && !available.retry
  },
  {
    id: CommandIDs.resume,
    label: trans => trans.__('Resume'),
    icon: runIcon,
    enabled: 'resume',
    shown: showsResume,
    primary: () => true
  },
  {
    id: CommandIDs.pause,
    label: trans => trans.__('Pause'),
    icon: pauseIcon,
    enabled: 'pause',
    shown: state => !showsResume(state)
  },
  {
    id: CommandIDs.step,
    label: trans => trans.__('Step'),
    icon: stepOverIcon,
    enabled: 'step'
  },
  {
    id: CommandIDs.stop,
    label: trans => trans.__('Stop'),
    icon: stopIcon,
    enabled: 'stop'
  }
];

export interface IControlBarProps extends IControlState {
  commands: CommandRegistry;
  trans: TranslationBundle;
  /** Shows Undo (the last behavior), enabled when true. */
  canUndo?: boolean;
}

/** The run's control buttons (Run, Resume or Pause, Step, Stop) as a toolbar. */
export function ControlBar(props: IControlBarProps): JSX.Element {
  const { commands, trans } = props;
  return (
    <div
      className="jp-bcc-controls"
      role="toolbar"
      aria-label={trans.__('Workflow controls')}
    >
      {CONTROLS.filter(control => control.shown?.(props) ?? true).map(
        // Keyed by position: Resume and Pause share one button, which keeps its focus when they swap.
        (control, index) => (
          <CommandButton
            key={index}
            commands={commands}
            id={control.id}
            label={control.label(trans)}
            icon={control.icon}
            enabled={props.available[control.enabled]}
            primary={control.primary?.(props) ?? false}
          />
        )
      )}
      {props.canUndo !== undefined ? (
        <CommandButton
          commands={commands}
          id={CommandIDs.undoBehavior}
          label={trans.__('Undo')}
          icon={undoIcon}
          enabled={props.canUndo}
        />
      ) : null}
    </div>
  );
}
