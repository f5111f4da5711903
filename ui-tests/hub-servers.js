/**
 * The `hub` project's servers: llama.cpp's OpenAI-compatible server with Gemma 3 270M (from `.venv-llm`,
 * `make llm-venv`), the model of the shared LLM planner, and a real JupyterHub (from `.venv-hub`, `make
 * hub-venv`, with configurable-http-proxy from node_modules) whose managed services are that planner and
 * jupyterhub-idle-culler (ui-tests/hub/jupyterhub_config.py). Ports follow BCC_HUB_PORT (default
 * BCC_LAB_PORT + 60): the Hub's public port, then its API, the proxy's API, the planner, the model.
 */
const fs = require('fs');
const os = require('os');
const path = require('path');
const LLM = require('./llm-servers');

const LAB_PORT = Number(process.env.BCC_LAB_PORT || 8888);
const HUB_PORT = Number(process.env.BCC_HUB_PORT || LAB_PORT + 60);
const HUB_URL = `http://127.0.0.1:${HUB_PORT}`;
const HUB_MODEL_PORT = HUB_PORT + 4;
const HUB_STATE = path.join(os.tmpdir(), `bcc-hub-${HUB_PORT}`);
const HUB_RUN_LOG = path.join(HUB_STATE, 'planner-runs.jsonl');
const HUB_PASSWORD = 'bcc-hub-test';
const HUB_TEST_TOKEN = 'hub-test-token-0123456789';
const HUB_CULL_TIMEOUT = 20;
const HUB_VENV = path.resolve(__dirname, '../.venv-hub');
const available =
  LLM.available && fs.existsSync(path.join(HUB_VENV, 'bin/jupyterhub'));

function hubServers() {
  if (!available) {
    return [];
  }
  return [
    {
      command: [
        path.resolve(__dirname, '../.venv-llm/bin/python'),
        '-m llama_cpp.server',
        `--model ${LLM.modelFile(LLM.HUB_MODEL)}`,
        `--model_alias ${LLM.HUB_MODEL}`,
        '--host 127.0.0.1',
        `--port ${HUB_MODEL_PORT}`,
        '--n_ctx 8192',
        `--n_threads ${LLM.LLM_THREADS}`,
        `--api_key ${LLM.LLM_KEY}`
      ].join(' '),
      url: `http://127.0.0.1:${HUB_MODEL_PORT}/v1/models`,
      timeout: 120 * 1000,
      reuseExistingServer: false
    },
    {
      command: 'bash hub/start.sh',
      url: `${HUB_URL}/hub/api/`,
      // The planner's log (a managed service's stdout) beside the Hub's.
      stdout: 'pipe',
      // SIGTERM: the Hub stops the users' servers and its services, which run in sessions of their own.
      gracefulShutdown: { signal: 'SIGTERM', timeout: 30000 },
      env: {
        ...process.env,
        BCC_HUB_PORT: String(HUB_PORT),
        BCC_HUB_STATE: HUB_STATE,
        BCC_HUB_PASSWORD: HUB_PASSWORD,
        BCC_HUB_TEST_TOKEN: HUB_TEST_TOKEN,
        BCC_HUB_CULL_TIMEOUT: String(HUB_CULL_TIMEOUT),
        BCC_HUB_MODEL: LLM.HUB_MODEL,
        BCC_HUB_MODEL_KEY: LLM.LLM_KEY
      },
      timeout: 120 * 1000,
      reuseExistingServer: false
    }
  ];
}

module.exports = {
  HUB_URL,
  HUB_RUN_LOG,
  HUB_PASSWORD,
  HUB_TEST_TOKEN,
  HUB_CULL_TIMEOUT,
  available,
  hubServers
};
