/**
 * The test doubles the reference planner service starts with `--dialect NAME`: one for each dialect
 * of the extension's registry (`src/protocol/dialects/registry.ts`) but the seed, whose double is the
 * reference planner itself. A dialect without its double here does not compile.
 */
import {
  DIALECTS,
  type TestDoubleName
} from '../../../src/protocol/dialects/registry';
import { bccDouble } from './bcc';
import type { IDouble } from './double';
import { v1Double } from './v1';

/** `--dialect` of the reference planner itself (the seed dialect's double). */
export const REFERENCE_PLANNER = DIALECTS[0].testDouble;

export type DoubleName = Exclude<TestDoubleName, typeof REFERENCE_PLANNER>;

export const DOUBLES: { readonly [name in DoubleName]: IDouble<unknown> } = {
  bcc: bccDouble,
  v1: v1Double
};

/** Every name `--dialect` takes, in the registry's order. */
export const DOUBLE_NAMES: readonly TestDoubleName[] = DIALECTS.map(
  dialect => dialect.testDouble
);
