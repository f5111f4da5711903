import { JupyterFrontEndPlugin } from '@jupyterlab/application';
import { sidebarPlugin } from './plugins/sidebar';

const plugins: JupyterFrontEndPlugin<unknown>[] = [sidebarPlugin];

export default plugins;
