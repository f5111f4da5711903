/**
 * The second JupyterLab of the UI tests: served under a JupyterHub-like base URL. Its port follows
 * BCC_LAB_PORT (the next one) unless BCC_ALICE_PORT names one, so that two suites can run side by side.
 */
const LAB_PORT = Number(process.env.BCC_LAB_PORT || 8888);
const ALICE_PORT = Number(process.env.BCC_ALICE_PORT || LAB_PORT + 1);
const ALICE_BASE_PATH = '/user/alice/';
const ALICE_URL = `http://localhost:${ALICE_PORT}${ALICE_BASE_PATH}`;

module.exports = { ALICE_PORT, ALICE_BASE_PATH, ALICE_URL };
