/**
 * The servers of the `notebook7` and `gateway` projects (started by ecosystem-servers.js): Jupyter Notebook 7, and a JupyterLab whose kernels
 * live in a Jupyter Kernel Gateway reached through a proxy that answers slowly. Ports follow BCC_LAB_PORT
 * (offsets 5 to 8) so that two suites can run side by side.
 */
const LAB_PORT = Number(process.env.BCC_LAB_PORT || 8888);
const NOTEBOOK7_PORT = Number(process.env.BCC_NOTEBOOK7_PORT || LAB_PORT + 5);
const GATEWAY_LAB_PORT = Number(
  process.env.BCC_GATEWAY_LAB_PORT || LAB_PORT + 6
);
const KERNEL_GATEWAY_PORT = Number(
  process.env.BCC_KERNEL_GATEWAY_PORT || LAB_PORT + 7
);
const SLOW_GATEWAY_PORT = Number(
  process.env.BCC_SLOW_GATEWAY_PORT || LAB_PORT + 8
);
/** How long the proxy holds each REST request to the gateway (kernel start, interrupt, restart, lists). */
const GATEWAY_DELAY_S = 2;
/** The latency it adds to every kernel message, each way: none, as a run takes several times longer. */
const GATEWAY_LATENCY_S = 0;

const KERNEL_GATEWAY_URL = `http://127.0.0.1:${KERNEL_GATEWAY_PORT}`;
const NOTEBOOK7_READY_URL = `http://localhost:${NOTEBOOK7_PORT}/tree`;
const GATEWAY_LAB_READY_URL = `http://localhost:${GATEWAY_LAB_PORT}/lab`;
/** Each URL a project needs to answer before its tests start. */
const READY = {
  notebook7: [NOTEBOOK7_READY_URL],
  gateway: [
    `${KERNEL_GATEWAY_URL}/api`,
    `http://127.0.0.1:${SLOW_GATEWAY_PORT}/api`,
    GATEWAY_LAB_READY_URL
  ]
};

/** Waits until every server of `project` answers (they start beside the others, not before the tests). */
async function waitForServers(project, timeoutMs = 180 * 1000) {
  const until = Date.now() + timeoutMs;
  for (const url of READY[project]) {
    for (;;) {
      try {
        if ((await fetch(url)).ok) {
          break;
        }
      } catch {
        // Not listening yet.
      }
      if (Date.now() > until) {
        throw new Error(`${url} did not answer within ${timeoutMs / 1000} s`);
      }
      await new Promise(resolve => setTimeout(resolve, 500));
    }
  }
}

module.exports = {
  waitForServers,
  NOTEBOOK7_READY_URL,
  GATEWAY_LAB_READY_URL,
  NOTEBOOK7_PORT,
  GATEWAY_LAB_PORT,
  KERNEL_GATEWAY_PORT,
  SLOW_GATEWAY_PORT,
  GATEWAY_DELAY_S,
  GATEWAY_LATENCY_S,
  KERNEL_GATEWAY_URL
};
