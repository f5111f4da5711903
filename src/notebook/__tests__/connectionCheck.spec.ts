import type { ISessionContext } from '@jupyterlab/apputils';
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import { PromiseDelegate } from '@lumino/coreutils';
import { Signal } from '@lumino/signaling';
import { ConnectionCheck } from '../connectionCheck';

/**
 * A kernel connection whose kernel answers its kernel_info requests or not, connection after connection
 * (`answering[0]` for the first, then one per reconnection, the last repeating): through a Kernel Gateway,
 * after a restart, a connection may be deaf until it reconnects. `publishing` says, the same way, whether
 * the connection's iopub channel carries the kernel's status messages: a websocket that reopened while the
 * server was restarting the kernel may get the replies and never the outputs.
 */
class FakeKernel {
  readonly clientId = 'this-client';
  readonly username = '';
  isDisposed = false;
  status: Kernel.Status = 'idle';
  connectionStatus: Kernel.ConnectionStatus = 'connected';
  readonly connectionStatusChanged = new Signal<
    FakeKernel,
    Kernel.ConnectionStatus
  >(this);
  answering = [true];
  publishing = [true];
  readonly sent: KernelMessage.IShellMessage[] = [];
  reconnects = 0;

  /** Whether a kernel_info request sent now gets a reply. */
  get answers(): boolean {
    return this.answering[Math.min(this.reconnects, this.answering.length - 1)];
  }

  /** Whether the kernel's status messages reach this connection now. */
  get publishes(): boolean {
    return this.publishing[
      Math.min(this.reconnects, this.publishing.length - 1)
    ];
  }

  sendShellMessage(message: KernelMessage.IShellMessage): FakeFuture {
    if (this.status === 'dead') {
      throw new Error('Kernel is dead');
    }
    this.sent.push(message);
    const future = new FakeFuture();
    if (this.answers) {
      setTimeout(() => future.receive('reply'), 5);
      if (this.publishes) {
        setTimeout(() => future.receive('idle'), 6);
      }
    }
    return future;
  }

  async reconnect(): Promise<void> {
    this.reconnects++;
    this.setConnection('connecting');
    await new Promise(resolve => setTimeout(resolve, 5));
    this.setConnection('connected');
  }

  setConnection(status: Kernel.ConnectionStatus): void {
    this.connectionStatus = status;
    this.connectionStatusChanged.emit(status);
  }
}

/**
 * As JupyterLab's shell future: `onReply` at the reply, done once both the reply and the idle status
 * have come; disposing it first rejects.
 */
class FakeFuture {
  get done(): Promise<void> {
    return this._done.promise;
  }
  onReply: (() => void) | null = null;
  private _done = new PromiseDelegate<void>();
  private _received = new Set<'reply' | 'idle'>();
  private _disposed = false;

  receive(message: 'reply' | 'idle'): void {
    if (this._disposed) {
      return;
    }
    this._received.add(message);
    if (message === 'reply') {
      this.onReply?.();
    }
    if (this._received.size === 2) {
      this._done.resolve();
    }
  }

  dispose(): void {
    if (!this._disposed && this._received.size < 2) {
      this._done.reject(new Error('Canceled future before replies were done'));
    }
    this._disposed = true;
  }
}

/** The session context around it: proxies the connection's status, as JupyterLab's does. */
function sessionOf(kernel: FakeKernel) {
  const context = {
    session: { kernel },
    connectionStatusChanged: new Signal<unknown, Kernel.ConnectionStatus>({}),
    kernelChanged: new Signal<unknown, unknown>({}),
    iopubMessage: new Signal<unknown, KernelMessage.IMessage>({})
  };
  kernel.connectionStatusChanged.connect((_, status) =>
    context.connectionStatusChanged.emit(status)
  );
  return context;
}

function setup(options: Partial<ConnectionCheck.IOptions> = {}) {
  const kernel = new FakeKernel();
  const session = sessionOf(kernel);
  const check = new ConnectionCheck(session as unknown as ISessionContext, {
    answerMs: 100,
    reconnects: 2,
    ...options
  });
  const answering = () =>
    check.answering(kernel as unknown as Kernel.IKernelConnection);
  return { kernel, session, check, answering };
}

describe('ConnectionCheck', () => {
  let warn: jest.SpyInstance;
  beforeEach(() => {
    warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => {
    warn.mockRestore();
  });

  it('asks a connection once: after its answer, it is trusted until it reconnects', async () => {
    const { kernel, answering } = setup();
    expect(await answering()).toBe(true);
    expect(kernel.sent.map(m => m.header.msg_type)).toEqual([
      'kernel_info_request'
    ]);
    expect(kernel.sent[0].header.session).toBe('this-client');
    expect(await answering()).toBe(true);
    expect(kernel.sent).toHaveLength(1);

    // A restart reconnects it: the next use asks again.
    kernel.setConnection('connecting');
    kernel.setConnection('connected');
    expect(await answering()).toBe(true);
    expect(kernel.sent).toHaveLength(2);
    expect(kernel.reconnects).toBe(0);
    expect(warn).not.toHaveBeenCalled();
  });

  it('reconnects a connection the kernel does not answer, then trusts it', async () => {
    const { kernel, answering } = setup();
    kernel.answering = [false, true];
    const started = Date.now();
    expect(await answering()).toBe(true);
    expect(kernel.sent).toHaveLength(2);
    expect(kernel.reconnects).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith(
      expect.stringContaining('did not answer within 0.1 s; reconnecting')
    );
  });

  it('reconnects a connection that gets the replies but not the status messages', async () => {
    // After an automatic restart, JupyterLab reopens the websocket while the server restarts the
    // kernel; the server may then bind the connection's iopub to the old kernel: cells run, their
    // outputs and their end never arrive, and each cell stays at [*].
    const { kernel, answering } = setup();
    kernel.publishing = [false, true];
    expect(await answering()).toBe(true);
    expect(kernel.reconnects).toBe(1);
    expect(kernel.sent).toHaveLength(2);
    expect(warn).toHaveBeenCalledWith(
      expect.stringContaining('did not answer within 0.1 s; reconnecting')
    );
  });

  it('gives up after its reconnections', async () => {
    const { kernel, answering } = setup();
    kernel.answering = [false];
    const started = Date.now();
    expect(await answering()).toBe(false);
    expect(kernel.reconnects).toBe(2);
    expect(kernel.sent).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(3 * 100 + 200);
    // Nothing is trusted: the next use asks again.
    kernel.answering = [true];
    expect(await answering()).toBe(true);
    expect(kernel.sent).toHaveLength(4);
  });

  it('answers calls made meanwhile with the same check', async () => {
    const { kernel, answering } = setup();
    kernel.answering = [false, true];
    const both = await Promise.all([answering(), answering()]);
    expect(both).toEqual([true, true]);
    expect(kernel.reconnects).toBe(1);
    expect(kernel.sent).toHaveLength(2);
  });

  it('sends its request once the connection is open', async () => {
    const { kernel, answering } = setup();
    kernel.setConnection('connecting');
    const pending = answering();
    await new Promise(resolve => setTimeout(resolve, 30));
    expect(kernel.sent).toHaveLength(0);
    kernel.setConnection('connected');
    expect(await pending).toBe(true);
    expect(kernel.sent).toHaveLength(1);
    expect(kernel.reconnects).toBe(0);
  });

  it('does not wait for a dead kernel, nor for a kernel the notebook no longer uses', async () => {
    const { kernel, session, answering } = setup();
    kernel.status = 'dead';
    expect(await answering()).toBe(false);
    expect(kernel.sent).toHaveLength(0);

    kernel.status = 'idle';
    (session.session as { kernel: unknown }).kernel = new FakeKernel();
    expect(await answering()).toBe(false);
    expect(kernel.sent).toHaveLength(0);
  });

  it('asks again when the notebook changes kernel', async () => {
    const { kernel, session, answering } = setup();
    expect(await answering()).toBe(true);
    session.kernelChanged.emit({});
    expect(await answering()).toBe(true);
    expect(kernel.sent).toHaveLength(2);
  });
});
