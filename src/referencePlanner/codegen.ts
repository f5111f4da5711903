/**
 * The pandas code the planner writes. Each step has an ordered list of approaches; a retry after a
 * failure takes the first approach not tried yet that fits the error, so it never repeats itself.
 */

import type { IApproach } from './pandasCode';
import {
  CORRELATIONS,
  DISTRIBUTIONS,
  FINDINGS,
  TARGET_DRIVERS
} from './analyseCode';
import { IMPUTE, LOAD, MISSING } from './prepareCode';

export const APPROACHES: Record<string, IApproach[]> = {
  load_data: LOAD,
  missing_values: MISSING,
  impute_missing: IMPUTE,
  distributions: DISTRIBUTIONS,
  correlations: CORRELATIONS,
  target_drivers: TARGET_DRIVERS,
  findings_report: FINDINGS
};
