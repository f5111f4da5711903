/**
 * The planner URL in the Settings Editor, with a "Test connection" button under it that runs
 * `notebook-bcc:test-connection` (its result is that command's notification). The URL itself is the
 * form's own string field, so it edits and saves as every other setting does. The button
 * (`settingsTestButton.tsx`) loads the first time the field is shown: nothing of it at startup.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import type { IFormRenderer } from '@jupyterlab/ui-components';
import type { CommandRegistry } from '@lumino/commands';
import * as React from 'react';
import { LazyModule, useLazyModule } from './lazyModule';
import type { ISavedSettings } from './settingsTestButton';

type Field = NonNullable<IFormRenderer['fieldRenderer']>;
type FieldProps = React.ComponentProps<Field>;

function savedSettingsOf(context: unknown): ISavedSettings | null {
  const settings = (context as { settings?: unknown } | undefined)?.settings;
  return typeof settings === 'object' &&
    settings !== null &&
    'composite' in settings &&
    'changed' in settings
    ? (settings as ISavedSettings)
    : null;
}

const button = new LazyModule(() => import('./settingsTestButton'));

/** The Test connection button once its chunk is loaded (nothing until then). */
function LazyTestButton(props: {
  commands: CommandRegistry;
  trans: TranslationBundle;
  settings: ISavedSettings | null;
  name: string;
  value: unknown;
}): JSX.Element | null {
  const module = useLazyModule(
    button,
    'Notebook-BCC: the Test connection button could not be loaded.'
  );
  if (!module) {
    return null;
  }
  const { commands, trans, settings, name, value } = props;
  return (
    <module.TestConnectionButton
      commands={commands}
      trans={trans}
      beforeTest={() => module.whenSaved(settings, name, value)}
    />
  );
}

/**
 * The settings form's field for the planner URL: its label, the form's own string field, then the
 * Test connection button. A `fieldRenderer` for `IFormRendererRegistry`.
 */
export function plannerUrlField(
  commands: CommandRegistry,
  trans: TranslationBundle
): Field {
  return function PlannerUrlField(props: FieldProps): JSX.Element {
    const { StringField } = props.registry.fields;
    return (
      <div className="jp-FormGroup-contentNormal jp-bcc-settings-url">
        <h3 className="jp-FormGroup-fieldLabel">
          {props.schema.title ?? props.name}
        </h3>
        <div className="jp-inputFieldWrapper jp-FormGroup-contentItem">
          <StringField {...props} />
        </div>
        <LazyTestButton
          commands={commands}
          trans={trans}
          settings={savedSettingsOf(props.formContext)}
          name={props.name}
          value={props.formData ?? ''}
        />
      </div>
    );
  };
}
