import type { ISessionContext } from '@jupyterlab/apputils';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { Kernel } from '@jupyterlab/services';
import { nullTranslator } from '@jupyterlab/translation';
import { Signal } from '@lumino/signaling';
import { KernelNotRestarted } from '../../engine/ports/driver';
import { NotebookKernel } from '../kernel';

/** A kernel that answers every kernel_info request, and whose restart does what the test says. */
function fakeKernel(status: Kernel.Status, restart: () => Promise<void>) {
  const kernel = {
    status,
    isDisposed: false,
    connectionStatus: 'connected',
    connectionStatusChanged: new Signal<unknown, Kernel.ConnectionStatus>({}),
    clientId: 'client',
    username: '',
    sendShellMessage: () => ({ done: Promise.resolve(), dispose: () => {} }),
    restart: jest.fn(restart)
  };
  return kernel;
}

function kernelOf(
  kernel: ReturnType<typeof fakeKernel>,
  session: Partial<ISessionContext> = {}
) {
  const sessionContext = {
    isDisposed: false,
    isTerminating: false,
    pendingInput: false,
    initialize: async () => false,
    session: { kernel },
    connectionStatusChanged: new Signal<unknown, Kernel.ConnectionStatus>({}),
    kernelChanged: new Signal<unknown, unknown>({}),
    ...session
  };
  const panel = { sessionContext } as unknown as NotebookPanel;
  return new NotebookKernel(panel, nullTranslator.load('notebook_bcc'), 1000, {
    answerMs: 50,
    reconnects: 0
  });
}

describe('NotebookKernel.restart', () => {
  it.each([
    [
      'a dead kernel',
      'dead' as const,
      {},
      'The kernel is dead. Restart it, then resume the run.'
    ],
    [
      'a cell waiting for input',
      'idle' as const,
      { pendingInput: true },
      'Another cell waits for input; answer it, then resume the run.'
    ],
    [
      'a kernel shutting down',
      'idle' as const,
      { isTerminating: true },
      'The kernel is shutting down.'
    ]
  ])(
    'restarts nothing with %s, and says the kernel was not restarted',
    async (_, status, session, message) => {
      const kernel = fakeKernel(status, async () => undefined);
      const restarting = kernelOf(kernel, session).restart();
      await expect(restarting).rejects.toBeInstanceOf(KernelNotRestarted);
      await expect(restarting).rejects.toThrow(message);
      expect(kernel.restart).not.toHaveBeenCalled();
    }
  );

  it('does not claim the kernel kept its variables when the restart request fails', async () => {
    // The server may have shut the old kernel down before the error (or the reconnect failed after):
    // the restart is not known to have done nothing, so the run must not count on the old variables.
    const kernel = fakeKernel('idle', async () => {
      throw new Error('Internal Server Error');
    });
    const restarting = kernelOf(kernel).restart();
    await expect(restarting).rejects.toThrow('Internal Server Error');
    await expect(restarting).rejects.not.toBeInstanceOf(KernelNotRestarted);
  });

  it('restarts a kernel that answers', async () => {
    const kernel = fakeKernel('idle', async () => undefined);
    await kernelOf(kernel).restart();
    expect(kernel.restart).toHaveBeenCalledTimes(1);
  });
});
