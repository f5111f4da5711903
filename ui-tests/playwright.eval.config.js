/**
 * `make eval` (ui-tests/eval/, docs/eval.md): the LLM planner answering closed-form questions through the
 * whole extension: the project's own set and InfiAgent-DABench. By default against the local
 * Qwen2.5-Coder-1.5B-Instruct (llama.cpp from `make llm-venv`, a thread per core); set BCC_EVAL_BASE_URL and
 * BCC_EVAL_MODEL (and NOTEBOOK_BCC_LLM_API_KEY in the environment) to evaluate your own endpoint. The
 * planner keeps the product's defaults unless BCC_EVAL_STEPS, BCC_EVAL_TRIES or BCC_EVAL_PLANNER_ARGS say
 * otherwise. The kernel is `.venv-eval`'s (`make eval-venv`: pandas with SciPy, scikit-learn, statsmodels,
 * seaborn, which the benchmark's questions use).
 */
const fs = require('fs');
const os = require('os');
const path = require('path');
const base = require('./playwright.config');
const LLM = require('./llm-servers');

const LAB_PORT = Number(process.env.BCC_EVAL_LAB_PORT || LLM.LLM_LAB_PORT + 1);
const ownEndpoint = process.env.BCC_EVAL_BASE_URL;
const endpoint = ownEndpoint || `http://127.0.0.1:${LLM.LLM_PORT}/v1`;
const model = process.env.BCC_EVAL_MODEL || LLM.EVAL_MODEL;
// The eval runs alone: the local model gets a thread per core.
const threads = Number(process.env.BCC_LLM_THREADS) || os.cpus().length;
// `make eval-venv`'s kernel, found before the Python's own through JUPYTER_PATH.
const KERNELS = path.resolve(__dirname, '../.venv-eval/kernel/share/jupyter');
const kernelPath = process.env.BCC_EVAL_KERNEL_PATH ?? KERNELS;
if (kernelPath && !fs.existsSync(path.join(kernelPath, 'kernels/python3'))) {
  throw new Error(
    `no eval kernel in ${kernelPath}: run \`make eval-venv\` (or set BCC_EVAL_KERNEL_PATH= to use the Python of .venv)`
  );
}

// What differs from the product's planner defaults: only what these variables set.
const plannerArgs = [
  ...(process.env.BCC_EVAL_STEPS
    ? [`--LLMPlanner.max_plan_steps=${process.env.BCC_EVAL_STEPS}`]
    : []),
  ...(process.env.BCC_EVAL_TRIES
    ? [`--LLMPlanner.max_tries_per_step=${process.env.BCC_EVAL_TRIES}`]
    : []),
  ...(process.env.BCC_EVAL_PLANNER_ARGS || '').split(/\s+/).filter(Boolean)
];

module.exports = {
  ...base,
  // One question at a time: each question's time is its own, on the one model server.
  workers: 1,
  testDir: './eval',
  testMatch: /llmEval\.spec\.ts/,
  outputDir: './eval-results/output',
  reporter: [['list']],
  // A fresh run puts an earlier run's results aside (BCC_EVAL_RESUME=1 goes on with them instead).
  globalSetup: require.resolve('./eval/setup.js'),
  projects: [
    { name: 'eval', use: { baseURL: `http://localhost:${LAB_PORT}` } }
  ],
  webServer: [
    ...(ownEndpoint
      ? []
      : [
          LLM.modelServer({
            model,
            port: LLM.LLM_PORT,
            threads,
            context: Number(process.env.BCC_EVAL_CONTEXT) || 8192
          })
        ]),
    {
      command: [
        'jupyter lab --config jupyter_server_test_config.py',
        `--port ${LAB_PORT} --ServerApp.port_retries=0`,
        `--LLMPlanner.base_url=${endpoint}`,
        `--LLMPlanner.models=${model}`,
        ...plannerArgs
      ].join(' '),
      url: `http://localhost:${LAB_PORT}/lab`,
      env: {
        ...process.env,
        ...(kernelPath
          ? {
              JUPYTER_PATH: [kernelPath, process.env.JUPYTER_PATH]
                .filter(Boolean)
                .join(path.delimiter)
            }
          : {}),
        NOTEBOOK_BCC_LLM_API_KEY:
          process.env.NOTEBOOK_BCC_LLM_API_KEY ||
          (ownEndpoint ? '' : LLM.LLM_KEY)
      },
      timeout: 120 * 1000,
      reuseExistingServer: false
    }
  ]
};
