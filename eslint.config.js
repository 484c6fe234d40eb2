// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * Lint rules, including the direction of imports (DEVELOPERS.md, "Shape of the code"):
 * node-core/protocol is isomorphic and imports nothing of ours outside itself and no Node built-in;
 * the renderer uses only node-core's isomorphic parts; node-core never imports electron or renderer.
 */
const nodeBuiltins = [
  'node:*',
  'fs',
  'path',
  'os',
  'crypto',
  'child_process',
  'worker_threads',
  'net',
  'http',
  'url',
];

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'dist/',
      'renderer/dist/',
      'test-artifacts/',
      'node-core/protocol/pow-kernel.generated.ts',
      'node-core/api/validators.generated.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='it'][callee.property.name='only']",
          message: 'no focused tests',
        },
        {
          selector: "CallExpression[callee.object.name='describe'][callee.property.name='only']",
          message: 'no focused tests',
        },
      ],
    },
  },
  {
    files: ['node-core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/electron/**', '**/renderer/**', 'electron'],
              message: 'node-core never imports electron or the renderer.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['node-core/protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: nodeBuiltins, message: 'node-core/protocol is isomorphic: no Node built-ins.' },
            { group: ['../*'], message: 'node-core/protocol imports nothing of ours outside itself.' },
          ],
        },
      ],
    },
  },
  {
    files: ['renderer/**/*.ts', 'renderer/**/*.tsx'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: nodeBuiltins, message: 'the renderer runs in a browser: no Node built-ins.' },
            // A regex, not gitignore-style groups: a negated group cannot re-include a file whose parent
            // folder an earlier group already excluded, so '!**/node-core/protocol/**' never took effect.
            {
              regex: '(^|/)node-core/(?!(protocol|client)/)',
              message: 'the renderer uses only node-core/protocol and node-core/client.',
            },
            {
              regex: '(^|/)electron(/|$)',
              message:
                'the renderer never imports electron: the bridge types are in node-core/client/bridge.ts.',
            },
          ],
        },
      ],
    },
  },
);
