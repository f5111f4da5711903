/**
 * What a web page must not make the planner do. DNS rebinding: a page on `evil.example` whose name
 * later resolves to 127.0.0.1 reaches a loopback planner as same-origin, but its requests still say
 * `Host: evil.example`. A cross-site form or `text/plain` POST needs no preflight: the API answers
 * only `application/json`, which a page can send cross-site only after a preflight the planner refuses.
 */
import { hostname, networkInterfaces } from 'os';
import { isIP } from 'net';

/** Bind addresses that listen on every interface. */
const WILDCARDS = new Set(['', '0.0.0.0', '::', '[::]']);

/** The host of a `Host` header, lowercased, without port, brackets or trailing dot. */
export function hostOf(header: string): string {
  const text = header.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) {
    return bracketed[1];
  }
  return text.replace(/:\d+$/, '').replace(/\.$/, '');
}

function isLoopback(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return true;
  }
  if (isIP(host) === 4) {
    return host.startsWith('127.');
  }
  return host === '::1' || host === '::ffff:127.0.0.1';
}

/**
 * The names a request may give in `Host`: loopback always, the address the server listens on, the
 * `--allowed-host` names; on a wildcard bind also this machine's name and interface addresses.
 */
export function allowedHosts(
  bindHost: string,
  extra: readonly string[] = []
): Set<string> {
  const names = new Set(extra.map(hostOf));
  if (WILDCARDS.has(bindHost)) {
    names.add(hostname().toLowerCase());
    for (const addresses of Object.values(networkInterfaces())) {
      for (const address of addresses ?? []) {
        names.add(address.address.toLowerCase());
      }
    }
  } else {
    names.add(
      hostOf(
        bindHost.includes(':') && !bindHost.startsWith('[')
          ? `[${bindHost}]`
          : bindHost
      )
    );
  }
  return names;
}

/** Why a `Host` header is refused, or null when the request may go on. */
export function hostRefusal(
  header: string | undefined,
  allowed: ReadonlySet<string>
): string | null {
  if (header === undefined || header.trim() === '') {
    return 'the request names no Host; send Host: <planner host>:<port>';
  }
  const host = hostOf(header);
  if (isLoopback(host) || allowed.has(host)) {
    return null;
  }
  return (
    `Host "${header}" is not a name of this planner (DNS rebinding protection): ` +
    'use a loopback address (localhost, 127.0.0.1, [::1]) or the address it listens on, ' +
    'or start the planner with --allowed-host NAME'
  );
}

/** Whether a `Content-Type` header says JSON (`application/json`, any parameters). */
export function isJsonContentType(header: string | undefined): boolean {
  return (
    (header ?? '').split(';')[0].trim().toLowerCase() === 'application/json'
  );
}
