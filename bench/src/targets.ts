/**
 * The targets `make bench-short` holds (docs/performance.md): it fails when one of these figures is
 * over its target, naming the figure, its value and the target. Only figures whose target holds at the
 * short run's scale and does not move with the machine's load are judged:
 *
 * - 6, the JavaScript loaded at startup: bytes of the production build, the same at any scale and on
 *   any machine (a development build is not judged: the target is the production build's).
 * - 4, the planning payload: the request bodies the engine builds are trimmed to the context limit
 *   however many behaviors ran, and their size does not depend on time.
 *
 * The others are timings (1-3, 7-11) at a size too small to judge or with no hard target (5); the full
 * run (`make bench`) measures them.
 */
import type { IBundleResult } from './bundleBench';
import type { IObservationResult } from './observationBench';

export interface IJudgedFigures {
  bundle?: IBundleResult;
  observation?: IObservationResult;
}

export interface IJudgement {
  /** One line per figure over its target. */
  missed: string[];
  /** Figures measured but not judged, and why. */
  notJudged: string[];
}

function kb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

export function judgeTargets(figures: IJudgedFigures): IJudgement {
  const missed: string[] = [];
  const notJudged: string[] = [];
  const { bundle, observation } = figures;
  if (bundle) {
    if (bundle.build !== 'production') {
      notJudged.push(
        `figure 6 (JavaScript loaded at startup): a ${bundle.build} build is in place; its target holds for the production build (jlpm build:prod)`
      );
    } else if (bundle.startupGzipBytes > bundle.targetGzipBytes) {
      missed.push(
        `figure 6 (JavaScript loaded at startup, gzipped): ${kb(bundle.startupGzipBytes)}, over its target of ${kb(bundle.targetGzipBytes)}`
      );
    }
  }
  if (observation && !observation.planningWithinLimit) {
    missed.push(
      `figure 4 (planning payload): ${observation.planningMaxChars} characters, over its limit of ${observation.maxContextLength}`
    );
  }
  return { missed, notJudged };
}
