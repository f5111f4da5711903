/**
 * The servers of the `notebook7` and `gateway` projects: Jupyter Notebook 7, and a JupyterLab whose kernels
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

module.exports = {
  NOTEBOOK7_PORT,
  GATEWAY_LAB_PORT,
  KERNEL_GATEWAY_PORT,
  SLOW_GATEWAY_PORT,
  GATEWAY_DELAY_S,
  KERNEL_GATEWAY_URL: `http://127.0.0.1:${KERNEL_GATEWAY_PORT}`
};
