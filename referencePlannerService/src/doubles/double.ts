/**
 * What a test double is to the reference planner service: one folder under `doubles/`, listed once in
 * `registry.ts` under the name its dialect gives it (`IDialect.testDouble`). It declares its own
 * command-line flags, reads them, starts its server and says what it started.
 */
import type { ParseArgsConfig } from 'util';

import type { IDialectServerOptions, IRunningDoubleServer } from './http';

/** The flags a double reads besides the common ones (`--host`, `--port`, `--line-delay`, `--record`, `--quiet`). */
export type DoubleFlags = NonNullable<ParseArgsConfig['options']>;

/** The parsed flags, as `parseArgs` gives them. */
export type FlagValues = Readonly<
  Record<string, string | boolean | (string | boolean)[] | undefined>
>;

/** What every double is started with. */
export interface ICommonDoubleOptions extends IDialectServerOptions {
  /** Pause between streamed lines; each double has its own default. */
  lineDelayMs?: number;
}

export interface IDouble<TOwn> {
  readonly flags: DoubleFlags;
  /** Environment variables it reads, which no other double may find set. */
  readonly env?: readonly string[];
  /** Its lines of `--help`, indented as the others. */
  readonly usage: string;
  /** Its own options from the flags and the environment; throws (an `Error`) on a bad value. */
  read(values: FlagValues, env: NodeJS.ProcessEnv): TOwn;
  start(common: ICommonDoubleOptions, own: TOwn): Promise<IRunningDoubleServer>;
  /** What the start-up line says of its own options. */
  describe(own: TOwn): string;
}

/** Declares a double, its own options' type kept between `read`, `start` and `describe`. */
export function defineDouble<TOwn>(double: IDouble<TOwn>): IDouble<TOwn> {
  return double;
}

/** The flag's text values (`multiple: true`), or none. */
export function texts(value: FlagValues[string]): string[] {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string')
    : [];
}
