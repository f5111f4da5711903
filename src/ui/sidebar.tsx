/**
 * The right-side panel: the run of the active notebook. It listens to the current run of the model
 * registry and renders; every button runs a command. The components are in `components/`.
 */
import { PathExt } from '@jupyterlab/coreutils';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import type { CommandRegistry } from '@lumino/commands';
import type { Message } from '@lumino/messaging';
import * as React from 'react';
import type { IRunModelRegistry } from '../tokens';
import { TRANSLATION_DOMAIN } from '../translation';
import { SidebarView } from './components/SidebarView';
import { bccIcon } from './icons';

/** The right-side panel that shows the workflow run of the active notebook. */
export class WorkflowSidebar extends ReactWidget {
  constructor(options: WorkflowSidebar.IOptions) {
    super();
    this._options = options;
    this._trans = (options.translator ?? nullTranslator).load(
      TRANSLATION_DOMAIN
    );
    this.id = 'jp-bcc-sidebar';
    this.addClass('jp-bcc-sidebar');
    this.title.icon = bccIcon;
    this.title.caption = this._trans.__('Notebook-BCC Workflow');
    options.models.currentChanged.connect(this._onChanged, this);
  }

  protected render(): JSX.Element {
    const current = this._options.models.current;
    const path = current?.panel.context.localPath ?? null;
    return (
      <SidebarView
        model={current?.model ?? null}
        loading={current !== null && current.model === null}
        label={path}
        name={path === null ? null : PathExt.basename(path)}
        commands={this._options.commands}
        rendermime={this._options.rendermime}
        trans={this._trans}
      />
    );
  }

  // Hidden, it does not render: showing a run reads where its planner is, which loads the runtime.
  protected onUpdateRequest(msg: Message): void {
    if (this.isVisible) {
      super.onUpdateRequest(msg);
    }
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this.update();
  }

  private _onChanged(): void {
    this.update();
  }

  private _options: WorkflowSidebar.IOptions;
  private _trans: TranslationBundle;
}

export namespace WorkflowSidebar {
  export interface IOptions {
    /** The view models; the sidebar shows the current one. */
    models: IRunModelRegistry;
    commands: CommandRegistry;
    rendermime: IRenderMimeRegistry;
    translator?: ITranslator;
  }
}
