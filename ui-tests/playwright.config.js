/**
 * Galata drives a real JupyterLab (started below as Playwright's webServer) in Debian's Chromium.
 * No browser is downloaded: the executable is the system one. The reference planner runs beside it:
 * one instance as it is, one that fails its first /generating request (HTTP 500) and one that streams
 * slowly, so that pause and step can be seen while a stream is still going. A second JupyterLab serves
 * under a JupyterHub-like base URL (relay.spec.ts). When `make wheel-venv` has made `.venv-wheel` (only the
 * built wheel installed, no planner), a third JupyterLab runs from it and the `wheel` project runs the
 * first-run test there (and the `lab` project does not). When `make rtc-venv` has made `.venv-rtc` (the
 * wheel beside jupyter-collaboration), a fourth JupyterLab runs from it and the `rtc` project runs the
 * collaboration test there. The `notebook7` project runs its spec in Jupyter Notebook 7, the `gateway`
 * project in a JupyterLab whose kernels live in a Jupyter Kernel Gateway (servers: ecosystem-servers.js).
 * The fault specs run in the `faults` project, on a JupyterLab of their own (its settings are its own too),
 * so that they can run beside the `lab` project's specs. Each project's specs run one after another, two
 * projects at a time (`workers` below).
 */
const fs = require('fs');
const path = require('path');
const baseConfig = require('@jupyterlab/galata/lib/playwright-config');
const { PLANNERS } = require('./planners');

const LAB_PORT = Number(process.env.BCC_LAB_PORT || 8888);
const UI_WORKERS = Number(process.env.BCC_UI_WORKERS || 2);
const { ALICE_PORT, ALICE_BASE_PATH } = require('./servers');
const WHEEL_PORT = Number(process.env.BCC_WHEEL_PORT || LAB_PORT + 2);
const WHEEL_JUPYTER = path.resolve(__dirname, '../.venv-wheel/bin/jupyter');
const withWheel = fs.existsSync(WHEEL_JUPYTER);
const FIRST_RUN_SPEC = /firstRun\.spec\.ts/;
// The fault specs (tests/faults/*.spec.ts): the `faults` project, on a JupyterLab of its own.
const FAULTS_PORT = Number(process.env.BCC_FAULTS_PORT || LAB_PORT + 15);
const FAULTS_SPEC = /[\\/]faults[\\/][^\\/]+\.spec\.ts$/;

// Real-time collaboration: only the `rtc` project runs its spec, on the JupyterLab of `.venv-rtc`.
const RTC_PORT = Number(process.env.BCC_RTC_PORT || LAB_PORT + 9);
const RTC_JUPYTER = path.resolve(__dirname, '../.venv-rtc/bin/jupyter');
const withRtc = fs.existsSync(RTC_JUPYTER);
const RTC_SPEC = /collaboration\.spec\.ts/;
// --- Jupyter Notebook 7 and remote kernels (the `notebook7` and `gateway` projects) ---
const ECOSYSTEM = require('./ecosystem');
const ECOSYSTEM_SPECS = /(notebook7|gateway)\.spec\.ts/;
const ecosystemProjects = [
  {
    name: 'notebook7',
    testMatch: /notebook7\.spec\.ts/,
    use: { baseURL: `http://localhost:${ECOSYSTEM.NOTEBOOK7_PORT}` }
  },
  {
    name: 'gateway',
    testMatch: /gateway\.spec\.ts/,
    use: { baseURL: `http://localhost:${ECOSYSTEM.GATEWAY_LAB_PORT}` }
  }
];
// One webServer for the four servers, started first and at once (ecosystem-servers.js); each spec waits
// for its own servers.
const ecosystemServers = [
  {
    command: 'node ecosystem-servers.js',
    wait: { stdout: /ecosystem servers starting/ },
    timeout: 30 * 1000,
    reuseExistingServer: false
  }
];
// --- end of the `notebook7` and `gateway` block ---

// The LLM planner on a real model: only the `llm` project runs its spec, once `make llm-venv` made the model.
const LLM = require('./llm-servers');
const LLM_SPEC = /llm\.spec\.ts/;
// A real JupyterHub, two users, the shared LLM planner as a Hub service: only the `hub` project (hub-servers.js).
const HUB = require('./hub-servers');
const HUB_SPEC = /hub\.spec\.ts/;

// `--project NAME` on the command line: only the servers those projects need start (all of them without it).
function selectedProjects(argv) {
  const names = [];
  argv.forEach((arg, i) => {
    if (arg === '--project' && argv[i + 1]) {
      names.push(argv[i + 1]);
    } else if (arg.startsWith('--project=')) {
      names.push(arg.slice('--project='.length));
    }
  });
  return names;
}
const SELECTED = selectedProjects(process.argv);
const wants = (...projects) =>
  SELECTED.length === 0 || projects.some(name => SELECTED.includes(name));

const planner = ({ port, flags }) => ({
  command: `node ../referencePlannerService/lib/referencePlannerService/src/main.js --port ${port} --quiet ${flags}`,
  url: `http://127.0.0.1:${port}/health`,
  timeout: 30 * 1000,
  reuseExistingServer: false
});

// The order Playwright hands out the projects' specs: a free worker takes the first spec whose project is
// not already running, so the longest chain goes first and the others by length, largest first, so that
// the two workers end together. Minutes in one fresh-clone run, two at a time: lab 17.5, faults 9.8, llm
// 5.1, gateway 2.1, hub 1.6, rtc 1.2, notebook7 1.0, wheel 1.0.
const QUEUE = [
  'lab',
  'faults',
  'llm',
  'gateway',
  'hub',
  'rtc',
  'notebook7',
  'wheel'
];
const queued = name =>
  QUEUE.includes(name) ? QUEUE.indexOf(name) : QUEUE.length;

module.exports = {
  ...baseConfig,
  testDir: './tests',
  outputDir: './test-results',
  retries: 0,
  // A test.only left in a spec would silently run that test alone: refuse to run instead.
  forbidOnly: true,
  // Two at a time: each project's specs one after another (a project's specs share one JupyterLab and its
  // settings), two projects at once (`workers: 1` per project below). BCC_UI_WORKERS=1 runs every spec
  // one after another.
  workers: UI_WORKERS,
  timeout: 120 * 1000,
  reporter: [
    ['list'],
    ['json', { outputFile: 'test-results/results.json' }],
    ['html', { outputFolder: 'playwright-report', open: 'never' }]
  ],
  use: {
    ...baseConfig.use,
    baseURL: `http://localhost:${LAB_PORT}`,
    // A failed test keeps its trace (actions, DOM snapshots, network), without the screencast: recording
    // one for every test, passed or not, cost about an eighth of the suite's CPU (two specs, two runs
    // each: 238 and 239 CPU-seconds with it, 211 and 187 without).
    trace: { mode: 'retain-on-failure', screenshots: false },
    video: 'off',
    launchOptions: {
      executablePath: process.env.BCC_CHROMIUM || '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
        '--disable-sync',
        '--disable-quic'
      ]
    }
  },
  projects: [
    {
      name: 'lab',
      // The first-run test runs once: on the wheel's JupyterLab when there is one (what a user installs).
      testIgnore: [
        RTC_SPEC,
        ECOSYSTEM_SPECS,
        LLM_SPEC,
        HUB_SPEC,
        FAULTS_SPEC,
        ...(withWheel ? [FIRST_RUN_SPEC] : [])
      ]
    },
    ...(LLM.available
      ? [
          {
            name: 'llm',
            testMatch: LLM_SPEC,
            use: { baseURL: `http://localhost:${LLM.LLM_LAB_PORT}` }
          }
        ]
      : []),
    {
      name: 'faults',
      testMatch: FAULTS_SPEC,
      use: { baseURL: `http://localhost:${FAULTS_PORT}` }
    },
    ...(HUB.available
      ? [{ name: 'hub', testMatch: HUB_SPEC, use: { baseURL: HUB.HUB_URL } }]
      : []),
    ...(withWheel
      ? [
          {
            name: 'wheel',
            testMatch: FIRST_RUN_SPEC,
            use: { baseURL: `http://localhost:${WHEEL_PORT}` }
          }
        ]
      : []),
    ...(withRtc
      ? [
          {
            name: 'rtc',
            testMatch: RTC_SPEC,
            use: { baseURL: `http://localhost:${RTC_PORT}` }
          }
        ]
      : []),
    ...ecosystemProjects
  ]
    .sort((a, b) => queued(a.name) - queued(b.name))
    .map(project => ({ ...project, workers: 1 })),
  webServer: [
    ...(wants('notebook7', 'gateway') ? ecosystemServers : []),
    ...(wants('lab') ? labServers() : []),
    ...(wants('faults')
      ? [
          {
            command: `jupyter lab --config jupyter_server_test_config.py --port ${FAULTS_PORT} --ServerApp.port_retries=0`,
            url: `http://localhost:${FAULTS_PORT}/lab`,
            timeout: 120 * 1000,
            reuseExistingServer: !process.env.CI
          }
        ]
      : []),
    ...(withWheel && wants('wheel')
      ? [
          {
            // Only the wheel's venv on PATH: its jupyter, its kernel, no package of the clone.
            command: `${WHEEL_JUPYTER} lab --config jupyter_server_test_config.py --port ${WHEEL_PORT} --ServerApp.port_retries=0`,
            url: `http://localhost:${WHEEL_PORT}/lab`,
            env: { PATH: `${path.dirname(WHEEL_JUPYTER)}:/usr/bin:/bin` },
            timeout: 120 * 1000,
            reuseExistingServer: !process.env.CI
          }
        ]
      : []),
    ...(withRtc && wants('rtc')
      ? [
          {
            // jupyter-collaboration's server saves the shared document itself (its autosave).
            command: `${RTC_JUPYTER} lab --config jupyter_server_test_config.py --port ${RTC_PORT} --ServerApp.port_retries=0`,
            url: `http://localhost:${RTC_PORT}/lab`,
            env: { PATH: `${path.dirname(RTC_JUPYTER)}:/usr/bin:/bin` },
            timeout: 120 * 1000,
            reuseExistingServer: !process.env.CI
          }
        ]
      : []),
    ...(wants('llm') ? LLM.llmServers() : []),
    ...(wants('hub') ? HUB.hubServers() : []),
    ...Object.values(PLANNERS).map(planner)
  ]
};

/** The `lab` project's two JupyterLabs: one at the root, one under a JupyterHub-like base URL. */
function labServers() {
  return [
    {
      command: `jupyter lab --config jupyter_server_test_config.py --port ${LAB_PORT}`,
      url: `http://localhost:${LAB_PORT}/lab`,
      timeout: 120 * 1000,
      reuseExistingServer: !process.env.CI
    },
    {
      // No port retries: on another port the tests would not find it.
      command: `jupyter lab --config jupyter_server_test_config.py --port ${ALICE_PORT} --ServerApp.port_retries=0 --ServerApp.base_url=${ALICE_BASE_PATH}`,
      url: `http://localhost:${ALICE_PORT}${ALICE_BASE_PATH}lab`,
      timeout: 120 * 1000,
      reuseExistingServer: !process.env.CI
    }
  ];
}
