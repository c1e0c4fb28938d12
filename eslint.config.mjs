// Lint rules. The block for workflows/ is the determinism guard: workflow code is
// replayed, so it may only import the workflow SDK, its own contracts and activity types.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['node_modules/**', '.tools/**', '.data/**', '**/dist/**', 'test/artifacts/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    files: ['workflows/**/*.ts'],
    languageOptions: { globals: {} },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!@temporalio/(workflow|common)$|typebox$|\\./|\\.\\./activities/).*',
              message:
                'Workflow code must be deterministic: import only @temporalio/workflow, @temporalio/common, typebox (schemas), workflows/ and activity types.',
            },
          ],
        },
      ],
      '@typescript-eslint/consistent-type-imports': 'off',
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'No env reads in workflows: pass settings in the workflow input.' },
        { name: 'require', message: 'No dynamic requires in workflows.' },
        { name: 'fetch', message: 'No I/O in workflows: call an activity.' },
        { name: 'setInterval', message: 'Use sleep() from @temporalio/workflow.' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'Use workflow time via sleep/condition, or pass time in.' },
        { object: 'Math', property: 'random', message: 'Use uuid4() from @temporalio/workflow.' },
      ],
    },
  },
  {
    // Definitions one folder down import the workflow modules beside them (../definition.js), nothing further up.
    files: ['workflows/operations/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!typebox$|\\./|\\.\\./(?!\\.\\./)).*',
              message: 'An operation definition is plain data: import only typebox and the workflow modules beside it.',
            },
          ],
        },
      ],
    },
  },
  {
    // An example's definitions are bundled into the workflow code like the built-in ones:
    // plain data, importing typebox and retrysafe's definition types only (not its service).
    files: ['examples/*/operations.ts'],
    languageOptions: { globals: {} },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!typebox$|\\.\\./\\.\\./workflows/|\\./(?!service/)).*',
              message:
                'An operation definition is bundled into workflow code: import only typebox and workflows/ (definition, fields).',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'No env reads in a definition: it is workflow code.' },
        { name: 'fetch', message: 'No I/O in a definition: declare the call as a step.' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'A definition is a pure function of the request.' },
        { object: 'Math', property: 'random', message: 'A definition is a pure function of the request.' },
      ],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    ignores: ['workflows/contracts.ts'],
    rules: {
      // Activities may only be referenced as types from workflow code.
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['../activities/*'], allowTypeImports: true, message: 'Import activity types only (import type).' },
          ],
        },
      ],
    },
  },
);
