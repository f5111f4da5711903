import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { CommandRegistry } from '@lumino/commands';
import * as React from 'react';
import type { IRunModel } from '../../tokens';
import { LazyModule, useLazyModule } from '../lazyModule';
import type { IRunViewProps } from './RunView';

/** The run's view and all it renders: loaded the first time the panel shows a notebook's run. */
const runView = new LazyModule(() => import('./RunView'));

function LazyRunView(props: IRunViewProps): JSX.Element | null {
  const module = useLazyModule(
    runView,
    'Notebook-BCC: the run view could not be loaded.'
  );
  return module ? <module.RunView {...props} /> : null;
}

export interface ISidebarViewProps {
  /** The active notebook's run model; null without a notebook or while it loads. */
  model: IRunModel | null;
  /** The active notebook is still loading (its runner does not exist yet). */
  loading: boolean;
  /** The notebook's path (the header's tooltip), or null without a notebook. */
  label: string | null;
  /** The notebook's file name, shown in the header. */
  name: string | null;
  commands: CommandRegistry;
  rendermime: IRenderMimeRegistry;
  trans: TranslationBundle;
}

/**
 * The sidebar's content: a header naming the notebook, then its run or a hint. The run's view
 * (`RunView` and the components it renders) is a chunk of its own, loaded when first shown.
 */
export function SidebarView(props: ISidebarViewProps): JSX.Element {
  const { model, trans } = props;
  return (
    <>
      <header className="jp-bcc-header">
        <h2 className="jp-bcc-sidebar-title">{trans.__('Workflow')}</h2>
        {props.label ? (
          <div className="jp-bcc-notebook-name" title={props.label}>
            {props.name}
          </div>
        ) : null}
      </header>
      {model ? (
        <LazyRunView
          model={model}
          commands={props.commands}
          rendermime={props.rendermime}
          trans={trans}
        />
      ) : (
        <p className="jp-bcc-sidebar-empty">
          {props.loading
            ? trans.__('Loading the notebook…')
            : trans.__(
                'Open a notebook and run a workflow to see its progress here.'
              )}
        </p>
      )}
    </>
  );
}
