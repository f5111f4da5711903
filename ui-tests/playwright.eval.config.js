/**
 * `make eval` (ui-tests/eval/): the LLM planner answering closed-form tasks through the whole extension.
 * By default against the local Gemma 3 270M (llama.cpp from `make llm-venv`); set BCC_EVAL_BASE_URL and
 * BCC_EVAL_MODEL (and NOTEBOOK_BCC_LLM_API_KEY in the environment) to evaluate your own endpoint.
 */
const base = require('./playwright.config');
const LLM = require('./llm-servers');

const LAB_PORT = LLM.LLM_LAB_PORT + 1;
const ownEndpoint = process.env.BCC_EVAL_BASE_URL;
const endpoint = ownEndpoint || `http://127.0.0.1:${LLM.LLM_PORT}/v1`;
const model = process.env.BCC_EVAL_MODEL || LLM.LLM_MODEL;

module.exports = {
  ...base,
  // One task at a time: each task's time is its own, on the one model server.
  workers: 1,
  testDir: './eval',
  outputDir: './eval-results/output',
  reporter: [['list']],
  projects: [
    { name: 'eval', use: { baseURL: `http://localhost:${LAB_PORT}` } }
  ],
  webServer: [
    ...(ownEndpoint ? [] : [LLM.llmServers()[0]]),
    {
      command: [
        'jupyter lab --config jupyter_server_test_config.py',
        `--port ${LAB_PORT} --ServerApp.port_retries=0`,
        `--LLMPlanner.base_url=${endpoint}`,
        `--LLMPlanner.models=${model}`,
        `--LLMPlanner.max_plan_steps=${process.env.BCC_EVAL_STEPS || 2}`,
        `--LLMPlanner.max_tries_per_step=${process.env.BCC_EVAL_TRIES || 2}`
      ].join(' '),
      url: `http://localhost:${LAB_PORT}/lab`,
      env: {
        ...process.env,
        NOTEBOOK_BCC_LLM_API_KEY:
          process.env.NOTEBOOK_BCC_LLM_API_KEY ||
          (ownEndpoint ? '' : LLM.LLM_KEY)
      },
      timeout: 120 * 1000,
      reuseExistingServer: false
    }
  ]
};
