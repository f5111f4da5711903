/**
 * Whether the kernel answers the notebook's connection. Through a Kernel Gateway, the requests of a
 * connection that opened again (after a restart) may never reach the kernel: jupyter_server leaves a
 * second connection to the gateway under the same session id, and the kernel may answer that one instead
 * (see docs/gateways.md#restarts-through-a-gateway; `jupyterlab_notebook_bcc.gateway` removes the cause). The kernel then
 * stays "starting" and runs nothing, while Kernel > Reconnect to Kernel usually brings it back. So before
 * the run uses a connection that has (re)opened since it last answered, a kernel_info request tells, and
 * the connection is reopened when no reply comes, a bounded number of times.
 *
 * A local kernel's connection can be half deaf the same way: after an automatic restart (the kernel
 * died), JupyterLab reopens the websocket while the server is still restarting the kernel, and the
 * server may bind the new connection's iopub channel to the old kernel. Replies then arrive and outputs
 * never do, so every cell stays at [*]. The check therefore waits for the request's idle status on
 * iopub as well as for its reply.
 */
import type { ISessionContext } from '@jupyterlab/apputils';
import { KernelMessage } from '@jupyterlab/services';
import type { Kernel } from '@jupyterlab/services';
import { PromiseDelegate } from '@lumino/coreutils';

export class ConnectionCheck {
  constructor(
    private _session: ISessionContext,
    options: Partial<ConnectionCheck.IOptions> = {}
  ) {
    this._answerMs = options.answerMs ?? ConnectionCheck.ANSWER_MS;
    this._reconnects = options.reconnects ?? ConnectionCheck.RECONNECTS;
    _session.connectionStatusChanged.connect(this._onConnectionStatus, this);
    _session.kernelChanged.connect(this._forget, this);
  }

  /**
   * Resolves true once the kernel answers this connection: at once when it did since the connection
   * last opened. Otherwise a kernel_info request is sent, and when no reply comes within `answerMs`, the
   * connection is reopened, up to `reconnects` times; false when the kernel never answered. Calls made
   * meanwhile share the same check.
   */
  answering(kernel: Kernel.IKernelConnection): Promise<boolean> {
    if (this._answered === kernel) {
      return Promise.resolve(true);
    }
    if (this._checking?.kernel !== kernel) {
      const done = this._check(kernel).finally(() => {
        if (this._checking?.done === done) {
          this._checking = null;
        }
      });
      this._checking = { kernel, done };
    }
    return this._checking.done;
  }

  private async _check(kernel: Kernel.IKernelConnection): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      if (
        kernel.isDisposed ||
        kernel.status === 'dead' ||
        this._session.session?.kernel !== kernel
      ) {
        return false;
      }
      if (await this._probe(kernel)) {
        this._answered = kernel;
        return true;
      }
      if (attempt >= this._reconnects) {
        return false;
      }
      console.warn(
        `Notebook-BCC: the kernel did not answer within ${this._answerMs / 1000} s; reconnecting to it.`
      );
      // A reconnection that fails leaves the connection as it was: the next request tells.
      await kernel.reconnect().catch(() => undefined);
    }
  }

  /**
   * One kernel_info request, sent once the connection is open: whether both its reply (shell) and its
   * idle status (iopub) come within `answerMs`.
   */
  private async _probe(kernel: Kernel.IKernelConnection): Promise<boolean> {
    const answered = new PromiseDelegate<boolean>();
    const timer = setTimeout(() => answered.resolve(false), this._answerMs);
    let future: Kernel.IShellFuture | null = null;
    const send = () => {
      if (future !== null || kernel.connectionStatus !== 'connected') {
        return;
      }
      try {
        future = kernel.sendShellMessage(
          KernelMessage.createMessage({
            msgType: 'kernel_info_request',
            channel: 'shell',
            session: kernel.clientId,
            username: kernel.username,
            content: {}
          }),
          true
        );
        // A shell future is done once both its reply and its idle status on iopub have come.
        future.done.then(
          () => answered.resolve(true),
          () => undefined
        );
      } catch {
        // The kernel is dead or the connection closed meanwhile: the timer decides.
      }
    };
    kernel.connectionStatusChanged.connect(send);
    send();
    try {
      return await answered.promise;
    } finally {
      clearTimeout(timer);
      kernel.connectionStatusChanged.disconnect(send);
      (future as Kernel.IShellFuture | null)?.dispose();
    }
  }

  private _onConnectionStatus(
    _: ISessionContext,
    status: Kernel.ConnectionStatus
  ): void {
    if (status !== 'connected') {
      this._forget();
    }
  }

  private _forget(): void {
    this._answered = null;
  }

  private _answerMs: number;
  private _reconnects: number;
  private _answered: Kernel.IKernelConnection | null = null;
  private _checking: {
    kernel: Kernel.IKernelConnection;
    done: Promise<boolean>;
  } | null = null;
}

export namespace ConnectionCheck {
  export interface IOptions {
    /** How long the kernel may take to answer a kernel_info request before the connection is reopened, in ms. */
    answerMs: number;
    /** How many times the connection is reopened before the kernel is reported as not answering. */
    reconnects: number;
  }

  /** A restarted kernel answers within a few seconds, even one that has just been launched remotely. */
  export const ANSWER_MS = 10000;
  export const RECONNECTS = 3;
}
