/**
 * Faults injected on top of any mode, to test how a client copes with a misbehaving planner.
 *
 * Spec syntax: `NAME[=VALUE][@[ENDPOINT:]N]`, e.g. `malformed-line`, `http-429=2@3`,
 * `slow-first-byte=5000@planning:1`. Without `@N` a fault fires on the first request it applies to;
 * with `@N` on the Nth such request. Each fault fires once. Stream faults count /generating requests
 * unless an endpoint is given; status faults count every API request.
 */

export const STREAM_FAULTS = [
  'malformed-line',
  'split-utf8',
  'truncated-line',
  'reset',
  'stall',
  'oversized-action',
  'unknown-action',
  'missing-field',
  'many-warnings',
  'long-line',
  'many-actions',
  'paused-flood'
] as const;

/** Faults in a /planning answer (counted among /planning requests unless an endpoint is given). */
export const PLANNING_FAULTS = ['bad-pattern'] as const;

export const STATUS_FAULTS = [
  'http-500',
  'http-429',
  'slow-first-byte'
] as const;

export type FaultName =
  | (typeof STREAM_FAULTS)[number]
  | (typeof STATUS_FAULTS)[number]
  | (typeof PLANNING_FAULTS)[number];
export type FaultScope = 'any' | 'planning' | 'generating';

export const FAULT_NAMES: readonly FaultName[] = [
  ...STREAM_FAULTS,
  ...STATUS_FAULTS,
  ...PLANNING_FAULTS
];

export interface IFaultSpec {
  name: FaultName;
  /**
   * `http-429`: Retry-After seconds (1); `slow-first-byte`: milliseconds (3000); `oversized-action`,
   * `long-line` and `paused-flood`: bytes (2 MiB, 16 MiB, 10 MiB); `many-warnings`, `many-actions`: lines.
   */
  value?: number;
  scope: FaultScope;
  /** 1-based index among the requests of `scope`; null = the first one. */
  nth: number | null;
}

export const FAULT_DEFAULTS: Partial<Record<FaultName, number>> = {
  'http-429': 1,
  'slow-first-byte': 3000,
  'oversized-action': 2 * 1024 * 1024,
  'many-warnings': 5000,
  'long-line': 16 * 1024 * 1024,
  'many-actions': 100_000,
  'paused-flood': 10 * 1024 * 1024
};

function isFaultName(name: string): name is FaultName {
  return (FAULT_NAMES as readonly string[]).includes(name);
}

export function parseFault(text: string): IFaultSpec {
  const match =
    /^([a-z0-9-]+)(?:=(\d+))?(?:@(?:(planning|generating|any):)?(\d+))?$/.exec(
      text.trim()
    );
  if (!match) {
    throw new Error(
      `fault "${text}": expected NAME[=VALUE][@[ENDPOINT:]N], e.g. malformed-line@2`
    );
  }
  const [, name, value, endpoint, nth] = match;
  if (!isFaultName(name)) {
    throw new Error(
      `fault "${text}": unknown fault "${name}"; known: ${FAULT_NAMES.join(', ')}`
    );
  }
  if (nth !== undefined && Number(nth) < 1) {
    throw new Error(`fault "${text}": N counts from 1`);
  }
  const isStream = (STREAM_FAULTS as readonly string[]).includes(name);
  const isPlanning = (PLANNING_FAULTS as readonly string[]).includes(name);
  return {
    name,
    ...(value !== undefined ? { value: Number(value) } : {}),
    scope:
      (endpoint as FaultScope | undefined) ??
      (isStream ? 'generating' : isPlanning ? 'planning' : 'any'),
    nth: nth === undefined ? null : Number(nth)
  };
}

export function faultValue(spec: IFaultSpec): number {
  return spec.value ?? FAULT_DEFAULTS[spec.name] ?? 0;
}

/** Counts API requests and hands out each fault once, on the request it names. */
export class FaultSchedule {
  constructor(specs: readonly IFaultSpec[]) {
    this._pending = specs.map(spec => ({ ...spec }));
  }

  /** Call once per validated API request; returns the faults that fire for it. */
  take(endpoint: 'planning' | 'generating'): IFaultSpec[] {
    this._counts.any++;
    this._counts[endpoint]++;
    const fired: IFaultSpec[] = [];
    this._pending = this._pending.filter(spec => {
      if (spec.scope !== 'any' && spec.scope !== endpoint) {
        return true;
      }
      if (spec.nth !== null && spec.nth !== this._counts[spec.scope]) {
        return true;
      }
      fired.push(spec);
      return false;
    });
    return fired;
  }

  get pending(): readonly IFaultSpec[] {
    return this._pending;
  }

  private _pending: IFaultSpec[];
  private _counts: Record<FaultScope, number> = {
    any: 0,
    planning: 0,
    generating: 0
  };
}
