/**
 * Kernel access: the notebook's kernel, started when there is none, and silent inspection of its
 * variables (no output, no history, no execution count).
 */
import type { ISessionContext } from '@jupyterlab/apputils';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { Kernel } from '@jupyterlab/services';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { OutputCheck, OutputContract } from '../protocol';
import {
  type IKernelVariables,
  KernelNotRestarted,
  type SummarizeRequest
} from '../engine/ports/driver';
import {
  englishText,
  type INotebookMessage,
  msg
} from '../engine/ports/messages';
import { ConnectionCheck } from './connectionCheck';
import {
  collectExpression,
  KERNEL_HELPERS,
  summarizeExpression
} from './kernelCode';
import { checkExpression } from './kernelChecks';

export class NotebookKernel {
  /**
   * `inspectTimeoutMs`: how long a silent variable inspection may wait for the kernel's reply;
   * `connection`: how long a (re)connected kernel may take to answer, and how often it is reconnected.
   */
  constructor(
    private _panel: NotebookPanel,
    private _trans: TranslationBundle,
    private _inspectTimeoutMs: number,
    connection: Partial<ConnectionCheck.IOptions> = {}
  ) {
    this._connection = new ConnectionCheck(_panel.sessionContext, connection);
  }

  get sessionContext(): ISessionContext {
    return this._panel.sessionContext;
  }

  async interrupt(): Promise<void> {
    await this.sessionContext.session?.kernel?.interrupt();
  }

  /**
   * Restarts the kernel without asking (the user chose it in the rewind dialog); starts one if none.
   * Resolves once the restarted kernel answers; rejects with `KernelNotRestarted` when it restarted
   * nothing. A failed restart request rejects with a plain error: the server may have shut the old
   * kernel down before failing, so its variables are not known to be there.
   */
  async restart(): Promise<void> {
    const kernel = await this.ensure();
    if ('params' in kernel) {
      throw new KernelNotRestarted(englishText(kernel));
    }
    await kernel.restart();
    const notAnswering = await this._answering(kernel);
    if (notAnswering) {
      throw new Error(englishText(notAnswering));
    }
  }

  /** The notebook's kernel, started (the notebook's preferred or the default kernel) if there is none; or why not. */
  async ensure(): Promise<Kernel.IKernelConnection | INotebookMessage> {
    const session = this.sessionContext;
    if (session.isDisposed) {
      return msg('sessionClosed');
    }
    // JupyterLab's executor would open a modal dialog in these two cases.
    if (session.isTerminating) {
      return msg('kernelShuttingDown');
    }
    if (session.pendingInput) {
      return msg('inputPending');
    }
    try {
      await session.initialize();
      if (!session.session?.kernel) {
        const name =
          session.kernelPreference.name ??
          session.specsManager.specs?.default ??
          null;
        if (!name) {
          return msg('noKernelToStart');
        }
        await session.changeKernel({ name });
      }
    } catch (reason) {
      return msg('kernelStartFailed', `${reason}`);
    }
    const kernel = session.session?.kernel;
    if (!kernel) {
      return msg('noKernel');
    }
    if (kernel.status === 'dead') {
      return msg('kernelDead');
    }
    return (await this._answering(kernel)) ?? kernel;
  }

  async collectVariables(
    redacted: readonly string[] = []
  ): Promise<IKernelVariables> {
    const reply = await this._evaluate(collectExpression(redacted));
    return {
      values: asRecord(reply?.values),
      types: Object.fromEntries(
        Object.entries(asRecord(reply?.types)).map(([name, type]) => [
          name,
          String(type)
        ])
      )
    };
  }

  async summarizeVariables(
    request: SummarizeRequest,
    redacted: readonly string[] = []
  ): Promise<Record<string, unknown>> {
    const names = Object.keys(request);
    if (!names.length) {
      return {};
    }
    const result = await this._evaluate(summarizeExpression(request, redacted));
    if (result) {
      return result;
    }
    const unavailable: Record<string, unknown> = {};
    for (const name of names) {
      unavailable[name] =
        `<${request[name]}: not available (no Python kernel)>`;
    }
    return unavailable;
  }

  /**
   * Each contract checked in the kernel (kernelChecks.ts). Without a Python kernel nothing can be
   * checked: each result says so.
   */
  async checkOutputs(
    contracts: readonly OutputContract[],
    redacted: readonly string[] = []
  ): Promise<Record<string, OutputCheck>> {
    if (contracts.length === 0) {
      return {};
    }
    const reply = await this._evaluate(checkExpression(contracts, redacted));
    const results: Record<string, OutputCheck> = {};
    for (const contract of contracts) {
      const result = reply?.[contract.name];
      results[contract.name] = isCheck(result)
        ? result
        : {
            ok: false,
            kind: contract.kind,
            type: null,
            value: null,
            reason: reply
              ? `\`${contract.name}\` was not checked: the kernel gave no result for it`
              : `\`${contract.name}\` was not checked: there is no Python kernel to check it in`
          };
    }
    return results;
  }

  /** Null once the kernel answers this connection; otherwise why not. */
  private async _answering(
    kernel: Kernel.IKernelConnection
  ): Promise<INotebookMessage | null> {
    const started = Date.now();
    if (await this._connection.answering(kernel)) {
      return null;
    }
    // The kernel may have died meanwhile.
    return kernel.status === 'dead'
      ? msg('kernelDead')
      : msg('kernelNotAnswering', Math.round((Date.now() - started) / 1000));
  }

  /**
   * Runs the helpers silently and evaluates one of them as a user expression. Null when there is no
   * Python kernel; throws when the kernel reports an error.
   */
  private async _evaluate(
    expression: string
  ): Promise<Record<string, unknown> | null> {
    const kernel = this._panel.isDisposed
      ? null
      : this.sessionContext.session?.kernel;
    if (!kernel || kernel.status === 'dead') {
      return null;
    }
    const checking = Date.now();
    if (!(await this._connection.answering(kernel))) {
      throw new Error(
        this._trans.__(
          'The kernel did not answer the variable inspection within %1 s.',
          Math.round((Date.now() - checking) / 1000)
        )
      );
    }
    return evaluateSilently(
      kernel,
      expression,
      this._inspectTimeoutMs,
      this._trans
    );
  }

  private _connection: ConnectionCheck;
}

/**
 * Runs the helpers silently in `kernel` and evaluates one of them as a user expression (no output, no
 * history, no execution count). Null when the kernel is not a Python kernel; throws when it reports
 * an error or does not answer within `timeoutMs`.
 */
export async function evaluateSilently(
  kernel: Kernel.IKernelConnection,
  expression: string,
  timeoutMs: number,
  trans: TranslationBundle
): Promise<Record<string, unknown> | null> {
  const info = await kernel.info;
  if (info.language_info.name !== 'python') {
    return null;
  }
  const future = kernel.requestExecute(
    {
      code: KERNEL_HELPERS,
      silent: true,
      store_history: false,
      allow_stdin: false,
      stop_on_error: false,
      user_expressions: { bcc: expression }
    },
    true
  );
  // An interrupt that lands while this silent request runs can leave it without a reply
  // (ipykernel 7): never wait for it longer than the inspection timeout.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<null>(resolve => {
    timer = setTimeout(() => resolve(null), timeoutMs);
  });
  const reply = await Promise.race([future.done, timedOut]).finally(() =>
    clearTimeout(timer)
  );
  if (reply === null) {
    future.dispose();
    throw new Error(
      trans.__(
        'The kernel did not answer the variable inspection within %1 s.',
        Math.round(timeoutMs / 1000)
      )
    );
  }
  const content = reply.content;
  if (content.status !== 'ok') {
    const detail =
      content.status === 'error'
        ? `${content.ename}: ${content.evalue}`
        : content.status;
    throw new Error(trans.__('Inspecting the kernel failed: %1', detail));
  }
  const result = content.user_expressions['bcc'] as
    | { status: 'ok'; data: { 'text/plain'?: string } }
    | { status: 'error'; ename: string; evalue: string }
    | undefined;
  if (!result || result.status !== 'ok') {
    const detail = result ? `${result.ename}: ${result.evalue}` : 'no reply';
    throw new Error(trans.__('Inspecting the kernel failed: %1', detail));
  }
  return JSON.parse(result.data['text/plain'] ?? '{}');
}

function isCheck(value: unknown): value is OutputCheck {
  const check = asRecord(value);
  return (
    typeof check.ok === 'boolean' &&
    typeof check.kind === 'string' &&
    (check.reason === undefined || typeof check.reason === 'string')
  );
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
