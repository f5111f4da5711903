module.exports = {
  extends: [
    'eslint:recommended',
    'plugin:@typescript-eslint/eslint-recommended',
    'plugin:@typescript-eslint/recommended',
    'plugin:prettier/recommended'
  ],
  parser: '@typescript-eslint/parser',
  parserOptions: {
    project: ['tsconfig.json', 'planner/tsconfig.json'],
    sourceType: 'module'
  },
  plugins: ['@typescript-eslint'],
  rules: {
    '@typescript-eslint/naming-convention': [
      'error',
      {
        selector: 'interface',
        format: ['PascalCase'],
        custom: { regex: '^I[A-Z]', match: true },
        filter: { regex: '^(I[A-Z]|[A-Z])', match: true }
      }
    ],
    '@typescript-eslint/no-unused-vars': ['warn', { args: 'none' }],
    '@typescript-eslint/no-explicit-any': 'error',
    '@typescript-eslint/no-namespace': 'off',
    '@typescript-eslint/no-use-before-define': 'off',
    curly: ['error', 'all'],
    eqeqeq: 'error',
    'prefer-arrow-callback': 'error',
    'no-restricted-imports': 'off'
  },
  overrides: [
    {
      // The protocol, the engine and the planner core run in plain Node: no JupyterLab, no DOM-bound Lumino packages.
      files: [
        'src/protocol/**/*.ts',
        'src/engine/**/*.ts',
        'src/planner/**/*.ts'
      ],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              {
                group: ['@jupyterlab/*'],
                message:
                  'protocol/, engine/ and planner/ must not import JupyterLab.'
              },
              {
                group: [
                  '@lumino/*',
                  '!@lumino/signaling',
                  '!@lumino/coreutils'
                ],
                message:
                  'protocol/, engine/ and planner/ may only use @lumino/signaling and @lumino/coreutils.'
              }
            ]
          }
        ]
      }
    }
  ]
};
