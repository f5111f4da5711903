/**
 * Whether the planner answers at all, whatever its dialect: `GET` its root through the transport, for
 * the Run dialog and "Test connection".
 */
import { excerpt } from './errors';
import { ERROR_BODY, Exchange } from './exchange';
import {
  type IMessageText,
  type ProtocolMessageId,
  say,
  textOf
} from './messages';
import type { IPlannerTransport } from './transport';

/** What `checkConnection` found, with a message a user can act on (`text`: translated by the UI). */
export interface IConnectionCheck extends IMessageText<ProtocolMessageId> {
  ok: boolean;
  /** The HTTP status, when the planner (or the relay) answered. */
  status?: number;
}

const CONNECTION_CHECK_TIMEOUT_MS = 10_000;

/** Any answer but a refusal or a server error means the planner is there. */
export async function checkConnection(
  transport: IPlannerTransport,
  options: {
    signal?: AbortSignal;
    timeoutMs?: number;
    headers?: Record<string, string>;
  } = {}
): Promise<IConnectionCheck> {
  const where = transport.labelText ?? transport.label;
  const exchange = new Exchange({
    method: 'GET',
    url: transport.urlOf(''),
    signal: options.signal,
    firstByteTimeoutMs: options.timeoutMs ?? CONNECTION_CHECK_TIMEOUT_MS,
    stallTimeoutMs: options.timeoutMs ?? CONNECTION_CHECK_TIMEOUT_MS
  });
  try {
    const response = await exchange.guard(
      transport.send({
        method: 'GET',
        path: '',
        headers: { ...options.headers, Accept: 'application/json' },
        signal: exchange.signal
      })
    );
    const status = response.status;
    const body = excerpt(
      await exchange.text(response, ERROR_BODY).catch(() => '')
    );
    const detail = `HTTP ${status}${body ? `: ${body}` : ''}`;
    if (status === 401 || status === 403) {
      return {
        ok: false,
        status,
        ...say('connectionRefused', where, detail)
      };
    }
    if (status >= 500) {
      return { ok: false, status, ...say('connectionError', where, detail) };
    }
    return { ok: true, status, ...say('connectionOk', where, status) };
  } catch (error) {
    const failure = exchange.mapError(error);
    return {
      ok: false,
      status: failure.status,
      ...say('connectionUnreachable', where, textOf(failure))
    };
  } finally {
    exchange.dispose();
  }
}
