/**
 * The `llm` project's servers: llama.cpp's OpenAI-compatible server (from `.venv-llm`, made by `make
 * llm-venv`) serving Gemma 3 270M, and a JupyterLab whose LLM planner settings are the user's own (kept in a
 * throwaway Jupyter data directory: the test stores them through the LLM Planner Settings dialog). Ports
 * follow BCC_LAB_PORT.
 */
const fs = require('fs');
const os = require('os');
const path = require('path');

const LAB_PORT = Number(process.env.BCC_LAB_PORT || 8888);
const LLM_PORT = Number(process.env.BCC_LLM_PORT || LAB_PORT + 12);
const LLM_LAB_PORT = Number(process.env.BCC_LLM_LAB_PORT || LAB_PORT + 13);
const LLM_KEY = 'sk-local-test-key';
const LLM_MODEL = 'gemma-3-270m';
const LLM_VENV = path.resolve(__dirname, '../.venv-llm');
const LLM_PYTHON = path.join(LLM_VENV, 'bin/python');
const MODEL_FILE = path.join(LLM_VENV, 'models/gemma-3-270m-q4_k_m.gguf');
const available = fs.existsSync(MODEL_FILE);
// One thread for each model server: the model always runs beside another UI project here, and llama.cpp's
// threads wait by spinning, so with a thread per core a busy machine slowed each request about fourfold
// (one run beside a busy loop: the same three planning requests took 16, 13 and 16 s with one thread, 73,
// 57 and 52 s with two). BCC_LLM_THREADS overrides it.
const LLM_THREADS = Number(process.env.BCC_LLM_THREADS) || 1;

function llmServers() {
  if (!available) {
    return [];
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bcc-llm-data-'));
  return [
    {
      command: [
        LLM_PYTHON,
        '-m llama_cpp.server',
        `--model ${MODEL_FILE}`,
        `--model_alias ${LLM_MODEL}`,
        '--host 127.0.0.1',
        `--port ${LLM_PORT}`,
        '--n_ctx 8192',
        `--n_threads ${LLM_THREADS}`,
        `--api_key ${LLM_KEY}`
      ].join(' '),
      // Ready once it answers at all (401 without the key).
      url: `http://127.0.0.1:${LLM_PORT}/v1/models`,
      timeout: 120 * 1000,
      reuseExistingServer: false
    },
    {
      // Small budgets keep a run of a slow local model within minutes: 2 planned steps, 2 tries each.
      command: [
        'jupyter lab --config jupyter_server_test_config.py',
        `--port ${LLM_LAB_PORT} --ServerApp.port_retries=0`,
        '--LLMPlanner.max_plan_steps=2',
        '--LLMPlanner.max_tries_per_step=2',
        '--LLMPlanner.max_completion_tokens=400'
      ].join(' '),
      url: `http://localhost:${LLM_LAB_PORT}/lab`,
      env: { ...process.env, JUPYTER_DATA_DIR: dataDir },
      timeout: 120 * 1000,
      reuseExistingServer: false
    }
  ];
}

module.exports = {
  LLM_PORT,
  LLM_LAB_PORT,
  LLM_KEY,
  LLM_MODEL,
  LLM_THREADS,
  available,
  llmServers
};
