import { SessionContextDialogs } from '@jupyterlab/apputils';
import { Context } from '@jupyterlab/docregistry';
import {
  INotebookModel,
  Notebook,
  NotebookModelFactory,
  NotebookPanel,
  StaticNotebook
} from '@jupyterlab/notebook';
import { NBTestUtils } from '@jupyterlab/notebook/lib/testutils';
import { ServiceManager } from '@jupyterlab/services';
import { JupyterServer } from '@jupyterlab/testing';
import { UUID } from '@lumino/coreutils';
import { Widget } from '@lumino/widgets';

/** Noise of the test environment (jsdom, duplicated Yjs views), not of the code under test. */
const QUIET = [
  'Invalid access: Add Yjs type to a document before reading data.',
  '[yjs#509] Not same Y.Doc',
  'Clipboard API not available'
];

/** Hides the environment's known noise and the server's debug chatter. */
export function quietConsole(): void {
  jest.spyOn(console, 'debug').mockImplementation(() => undefined);
  const warn = console.warn.bind(console);
  jest.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
    const first = String(args[0] ?? '');
    if (!QUIET.some(text => first.includes(text))) {
      warn(...args);
    }
  });
}

/**
 * One real Jupyter server for the spec file (started before its tests, shut down after), with a
 * service manager connected to it; call at the top level of a spec.
 */
export function useJupyterServer(): () => ServiceManager {
  const server = new JupyterServer();
  let manager: ServiceManager;
  beforeAll(async () => {
    await startServer(server);
    manager = new ServiceManager({ standby: 'never' });
    await manager.ready;
  }, 120000);
  afterAll(async () => {
    manager.dispose();
    await server.shutdown();
  }, 30000);
  return () => manager;
}

/** A real Jupyter server whose default kernel is IPython (`python` on PATH must have ipykernel). */
export async function startServer(server: JupyterServer): Promise<void> {
  await server.start({
    configData: {
      ServerApp: { allow_root: true, log_level: 'INFO' },
      LabApp: { log_level: 'INFO' },
      MultiKernelManager: { default_kernel_name: 'ipython' }
    }
  });
}

export interface IOpenNotebook {
  context: Context<INotebookModel>;
  panel: NotebookPanel;
  dispose(): Promise<void>;
}

/**
 * Opens (or creates) a notebook the way JupyterLab does: a document context on the server's
 * contents, a session context with a real kernel, a NotebookPanel attached to the DOM.
 */
export async function openNotebook(
  manager: ServiceManager.IManager,
  options: {
    path?: string;
    kernel?: boolean;
    windowingMode?: StaticNotebook.INotebookConfig['windowingMode'];
  } = {}
): Promise<IOpenNotebook> {
  const path = options.path ?? `${UUID.uuid4()}.ipynb`;
  const isNew = options.path === undefined;
  const kernel = options.kernel ?? true;
  const context = new Context<INotebookModel>({
    manager,
    factory: new NotebookModelFactory(),
    path,
    sessionDialogs: new SessionContextDialogs(),
    kernelPreference: {
      shouldStart: kernel,
      canStart: kernel,
      shutdownOnDispose: true,
      name: 'ipython'
    }
  });
  await context.initialize(isNew);
  if (kernel) {
    await context.sessionContext.ready;
    await context.sessionContext.session?.kernel?.info;
  }
  const content = new Notebook({
    rendermime: NBTestUtils.defaultRenderMime(),
    contentFactory: NBTestUtils.createNotebookFactory(),
    mimeTypeService: NBTestUtils.mimeTypeService,
    notebookConfig: {
      ...StaticNotebook.defaultNotebookConfig,
      windowingMode:
        options.windowingMode ??
        StaticNotebook.defaultNotebookConfig.windowingMode
    }
  });
  const panel = new NotebookPanel({ content, context });
  Widget.attach(panel, document.body);
  await panel.revealed;
  return {
    context,
    panel,
    dispose: async () => {
      panel.dispose();
      await context.sessionContext.shutdown();
      context.dispose();
    }
  };
}
