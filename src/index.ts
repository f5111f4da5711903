import { JupyterFrontEndPlugin } from '@jupyterlab/application';
import { commandsPlugin } from './plugins/commands';
import { notificationsPlugin } from './plugins/notifications';
import { actionsPlugin, modelsPlugin, runnersPlugin } from './plugins/runners';
import { settingsFieldPlugin } from './plugins/settingsField';
import { sidebarPlugin } from './plugins/sidebar';
import { statusbarPlugin } from './plugins/statusbar';

export * from './tokens';

const plugins: JupyterFrontEndPlugin<unknown>[] = [
  actionsPlugin,
  runnersPlugin,
  modelsPlugin,
  sidebarPlugin,
  commandsPlugin,
  statusbarPlugin,
  notificationsPlugin,
  settingsFieldPlugin
];

export default plugins;
