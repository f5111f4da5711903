const jestJupyterLab = require('@jupyterlab/testutils/lib/jest-config');

const esModules = [
  '@codemirror',
  '@jupyter/ydoc',
  '@jupyter/react-components',
  '@jupyter/web-components',
  '@jupyterlab/',
  '@marijn',
  '@microsoft',
  'color',
  'exenv-es6',
  'lib0',
  'marked',
  'nanoid',
  'vscode-ws-jsonrpc',
  'y-protocols',
  'y-websocket',
  'yjs'
].join('|');

const labConfig = jestJupyterLab(__dirname);
const tsTransform = {
  '^.+\\.tsx?$': ['ts-jest', { tsconfig: './tsconfig.test.json' }]
};

module.exports = {
  projects: [
    {
      // Pure TypeScript: the protocol, the engine and the reference planner run in plain Node.
      displayName: 'node',
      testEnvironment: 'node',
      moduleFileExtensions: ['ts', 'js', 'json', 'mjs', 'cjs'],
      testRegex:
        '(src/(protocol|engine|referencePlanner)|referencePlannerService/src)/.*__tests__/.*\\.spec\\.ts$',
      testPathIgnorePatterns: ['/lib/', '/node_modules/'],
      transform: tsTransform
    },
    {
      // Everything that touches JupyterLab: jsdom-like environment and ESM packages transpiled.
      ...labConfig,
      displayName: 'lab',
      reporters: undefined,
      testRegex: 'src/(notebook|ui|lab)/.*__tests__/.*\\.spec\\.tsx?$',
      testPathIgnorePatterns: ['/lib/', '/node_modules/'],
      transform: { ...labConfig.transform, ...tsTransform },
      transformIgnorePatterns: [`/node_modules/(?!${esModules}).+`]
    }
  ]
};
