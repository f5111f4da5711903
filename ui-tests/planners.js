/**
 * The reference planner instances the UI tests use (started by playwright.config.js). Ports follow
 * BCC_PLANNER_PORT (default 28600) so that two suites can run side by side.
 */
const BASE = Number(process.env.BCC_PLANNER_PORT || 28600);

const PLANNERS = {
  /** The planner as it is. */
  normal: { port: BASE, flags: '' },
  /** Its first /generating request fails with HTTP 500. */
  failing: { port: BASE + 1, flags: '--fault http-500@generating:1' },
  /** Streams one action every 700 ms: a behavior is still streaming when the test pauses. */
  slow: { port: BASE + 2, flags: '--line-delay 700' }
};

const plannerUrl = name => `http://127.0.0.1:${PLANNERS[name].port}`;

module.exports = { PLANNERS, plannerUrl };
