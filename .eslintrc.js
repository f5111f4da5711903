module.exports = {
  extends: [
    'eslint:recommended',
    'plugin:@typescript-eslint/eslint-recommended',
    'plugin:@typescript-eslint/recommended',
    'plugin:prettier/recommended'
  ],
  parser: '@typescript-eslint/parser',
  parserOptions: {
    project: ['tsconfig.json', 'referencePlannerService/tsconfig.json'],
    sourceType: 'module'
  },
  plugins: ['@typescript-eslint', 'import'],
  settings: {
    'import/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
    'import/resolver': { node: { extensions: ['.ts', '.tsx', '.js'] } }
  },
  rules: {
    // Data flows one way: protocol -> engine -> notebook -> ui -> lab -> plugins (docs/architecture.md).
    'import/no-restricted-paths': [
      'error',
      {
        zones: [
          {
            target: './src/protocol',
            from: './src',
            except: ['./protocol'],
            message: 'protocol/ imports nothing of this package but itself.'
          },
          {
            target: './src/engine',
            from: [
              './src/notebook',
              './src/ui',
              './src/lab',
              './src/plugins',
              './src/tokens.ts',
              './src/index.ts'
            ],
            message:
              'engine/ never imports notebook/, ui/, lab/, plugins/ or the tokens.'
          },
          {
            target: './src/notebook',
            from: [
              './src/ui',
              './src/lab',
              './src/plugins',
              './src/tokens.ts',
              './src/index.ts'
            ],
            message:
              'notebook/ never imports ui/, lab/, plugins/ or the tokens.'
          },
          {
            target: ['./src/ui', './src/lab'],
            from: ['./src/plugins', './src/index.ts'],
            message: 'Only plugins/ wire; ui/ and lab/ never import them.'
          },
          {
            target: './src/ui',
            from: './src/lab',
            message:
              'ui/ never imports lab/: it declares what it needs (in ui/ or tokens.ts) and lab/ or plugins/ pass it in.'
          },
          {
            target: './src/notebook',
            from: './src/engine',
            except: ['./ports'],
            message:
              'notebook/ imports of the engine only its ports (engine/ports/).'
          },
          // The engine's own floors (docs/architecture.md#the-engines-floors): ports <- state (saved
          // state and rewind beside it) <- actions <- the public surface <- run. No import runs back up.
          {
            target: './src/engine/ports/*.ts',
            from: './src/engine',
            except: ['./ports'],
            message: 'engine/ports/ imports nothing of the engine but itself.'
          },
          {
            target: [
              './src/engine/messages.ts',
              './src/engine/settings.ts',
              './src/engine/variables.ts',
              './src/engine/rewindView.ts'
            ],
            from: './src/engine',
            except: [
              './ports',
              './messages.ts',
              './settings.ts',
              './variables.ts',
              './rewindView.ts'
            ],
            message:
              'The engine leaves (messages, settings, variables, rewindView) import only the ports and each other.'
          },
          {
            target: './src/engine/state/*.ts',
            from: './src/engine',
            except: [
              './state',
              './ports',
              './messages.ts',
              './settings.ts',
              './variables.ts',
              './rewindView.ts'
            ],
            message:
              'engine/state/ imports only itself, the ports and the leaves: the state knows no action, rewind, save or run.'
          },
          {
            target: './src/engine/saved/*.ts',
            from: './src/engine',
            except: [
              './saved',
              './state',
              './ports',
              './messages.ts',
              './settings.ts',
              './variables.ts',
              './rewindView.ts'
            ],
            message:
              'engine/saved/ sits beside the state: it imports the state, the ports and the leaves.'
          },
          {
            target: './src/engine/rewind/*.ts',
            from: './src/engine',
            except: [
              './rewind',
              './state',
              './ports',
              './messages.ts',
              './settings.ts',
              './variables.ts',
              './rewindView.ts'
            ],
            message:
              'engine/rewind/ sits beside the state: it imports the state, the ports and the leaves.'
          },
          {
            target: './src/engine/actions/*.ts',
            from: './src/engine',
            except: [
              './actions',
              './state',
              './ports',
              './messages.ts',
              './settings.ts',
              './variables.ts',
              './rewindView.ts'
            ],
            message:
              'engine/actions/ imports the state, the ports and the leaves; never the run loop.'
          },
          {
            target: [
              './src/engine/contextFilter.ts',
              './src/engine/observation.ts',
              './src/engine/trace.ts',
              './src/engine/types.ts',
              './src/engine/snapshot.ts',
              './src/engine/testing/*.ts'
            ],
            from: ['./src/engine/run', './src/engine/index.ts'],
            message:
              'Only index.ts and the tests import the run loop (engine/run/).'
          },
          {
            target: './src/engine/run/*.ts',
            from: ['./src/engine/testing', './src/engine/index.ts'],
            message: 'engine/run/ never imports the fakes or the index.'
          },
          {
            target: './src/tokens.ts',
            from: ['./src/ui', './src/lab'],
            message:
              'tokens.ts holds its own interfaces: it imports nothing of ui/ or lab/.'
          }
        ]
      }
    ],
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
      // Planner text reaches these patterns: none may backtrack without bound. (`no-super-linear-move`
      // is left off: it flags every unanchored `/\/+$/` on a URL setting, text no planner writes.)
      files: [
        'src/**/*.ts',
        'src/**/*.tsx',
        'referencePlannerService/src/**/*.ts'
      ],
      plugins: ['regexp'],
      rules: {
        'regexp/no-super-linear-backtracking': 'error'
      }
    },
    {
      // Rooms one can live in (issue 30): lines as `wc -l` counts them, blank lines and comments included.
      files: ['src/**/*.ts', 'src/**/*.tsx'],
      excludedFiles: ['**/__tests__/**', '**/testing/**'],
      rules: {
        'max-lines': ['error', { max: 600 }],
        'max-lines-per-function': ['error', { max: 150 }]
      }
    },
    {
      // The protocol, the engine and the planner core run in plain Node: no JupyterLab, no DOM-bound Lumino packages.
      files: [
        'src/protocol/**/*.ts',
        'src/engine/**/*.ts',
        'src/referencePlanner/**/*.ts'
      ],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              {
                group: ['@jupyterlab/*'],
                message:
                  'protocol/, engine/ and referencePlanner/ must not import JupyterLab.'
              },
              {
                group: [
                  '@lumino/*',
                  '!@lumino/signaling',
                  '!@lumino/coreutils'
                ],
                message:
                  'protocol/, engine/ and referencePlanner/ may only use @lumino/signaling and @lumino/coreutils.'
              }
            ]
          }
        ]
      }
    }
  ]
};
