import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { TRANSLATION_DOMAIN } from '../tokens';
import { bccIcon } from './icons';

/** The right-side panel that shows the workflow run of the active notebook. */
export class WorkflowSidebar extends Widget {
  constructor(translator?: ITranslator) {
    super();
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    this.id = 'jp-bcc-sidebar';
    this.addClass('jp-bcc-sidebar');
    this.title.icon = bccIcon;
    this.title.caption = trans.__('Notebook-BCC Workflow');
    const heading = document.createElement('h2');
    heading.className = 'jp-bcc-sidebar-title';
    heading.textContent = trans.__('Workflow');
    const empty = document.createElement('p');
    empty.className = 'jp-bcc-sidebar-empty';
    empty.textContent = trans.__(
      'Open a notebook and run a workflow to see its progress here.'
    );
    this.node.append(heading, empty);
  }
}
