import type { LabIcon } from '@jupyterlab/ui-components';
import type { CommandRegistry } from '@lumino/commands';
import * as React from 'react';

export interface ICommandButtonProps {
  commands: CommandRegistry;
  /** The command the button executes; its caption and key binding make the tooltip. */
  id: string;
  /** The short text shown on the button. */
  label: string;
  icon: LabIcon;
  enabled: boolean;
  /** Drawn as the main action. */
  primary?: boolean;
}

/** A button that executes a command. */
export function CommandButton(props: ICommandButtonProps): JSX.Element {
  const { commands, id } = props;
  const caption = commands.caption(id) || props.label;
  const keys = commands.keyBindings.find(binding => binding.command === id);
  const shortcut = keys ? ` (${keys.keys.join(', ')})` : '';
  return (
    <button
      type="button"
      className={`jp-bcc-control ${props.primary ? 'jp-bcc-mod-primary' : ''}`}
      data-command={id}
      title={caption + shortcut}
      disabled={!props.enabled}
      onClick={() => {
        void commands.execute(id);
      }}
    >
      <props.icon.react tag="span" elementSize="small" />
      <span className="jp-bcc-control-label">{props.label}</span>
    </button>
  );
}
