// Lint rules. The folder fences keep the picture of the layout true: the product never
// imports the tooling (tools/) or the tests, the worker's side never imports the API, the
// sandboxes stand apart from the orchestrator (they share only the key grammar), the
// published client stands alone, and the tooling reaches the product only through a small,
// named surface. The block for workflows/ is the determinism guard: workflow code is
// replayed, so it may only import the workflow SDK, its own contracts and activity types.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

/** A fence: `files` may not import what `regex` matches (relative specifiers). */
const fence = (files, regex, message) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns: [{ regex, message }] }] },
});
const UP = '^(\\.\\./)+';

// What tools/ may use of the product: the catalog and its definitions, the shared
// modules of common/, the worker's and the API's entry points and configuration (with how
// the API claims a key, which the bench does without the API), the activities' entry, the
// sandboxes' configuration and fault vocabulary, and the published client's library (with
// the CLI's argument parsers and exit codes, which the demo's command line shares).
const TOOLS_SURFACE =
  UP +
  '(workflows/(?!(catalog|definition|program|identity|contracts|failures)\\.js$|definitions/)' +
  '|activities/(?!index\\.js$)' +
  '|worker/(?!(create|config)\\.js$)' +
  '|client/api/(?!(app|config|start-options|fingerprint)\\.js$)' +
  '|downstream/(?!(bank|reservations)/config\\.js$|shared/faults\\.js$)' +
  '|client/cli/(?!(args|exit-codes)\\.js$)' +
  '|test/)';

export default tseslint.config(
  { ignores: ['node_modules/**', '.tools/**', '.data/**', '**/dist/**', 'test/artifacts/**', 'tools/bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  fence(
    ['activities/**/*.ts', 'worker/**/*.ts', 'common/**/*.ts'],
    UP + '(tools|test|client/api|downstream)/',
    "The worker's side and common/ import neither the API, the sandboxes, the tooling nor the tests.",
  ),
  // common/ is the ground floor: the catalog of definitions is handed to it, never imported.
  {
    files: ['common/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: UP + '(tools|test|client/api|downstream)/',
              message: "The worker's side and common/ import neither the API, the sandboxes, the tooling nor the tests.",
            },
            {
              regex: UP + 'workflows/(catalog\\.js$|definitions/)',
              message: 'common/ is the ground floor: it is handed the catalog of definitions, it does not import it.',
            },
          ],
        },
      ],
    },
  },
  fence(
    ['client/api/**/*.ts'],
    UP + '(tools|test|downstream|activities|worker)/',
    'The API imports neither the worker, the sandboxes, the tooling nor the tests.',
  ),
  fence(
    ['client/lib/**/*.ts', 'client/cli/**/*.ts'],
    UP + '(workflows|activities|worker|common|downstream|tools|test|examples|api)/',
    'The client package is published on its own: it imports only client/lib and client/cli.',
  ),
  fence(
    ['downstream/**/*.ts', 'examples/*/service/**/*.ts'],
    UP + '(workflows/(?!identity\\.js$)|(activities|worker|client|tools|test)/)',
    'A downstream service stands apart from the orchestrator: it shares only the key grammar (workflows/identity.ts).',
  ),
  fence(
    ['tools/**/*.ts'],
    TOOLS_SURFACE,
    'Tooling uses the product through its named surface only (see TOOLS_SURFACE in eslint.config.mjs).',
  ),
  {
    files: ['workflows/**/*.ts'],
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
    },
  },
  {
    // Workflow code is replayed, and an operation definition (a built-in one or an
    // example's) is bundled into it: neither reads the environment, does I/O, or reads the
    // clock or a random source.
    files: ['workflows/**/*.ts', 'examples/*/operations.ts'],
    languageOptions: { globals: {} },
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'No env reads in workflow code: pass settings in the workflow input.' },
        { name: 'require', message: 'No dynamic requires in workflow code.' },
        { name: 'fetch', message: 'No I/O in workflow code: call an activity, or declare the call as a step.' },
        { name: 'setInterval', message: 'Use sleep() from @temporalio/workflow.' },
      ],
      'no-restricted-properties': [
        'error',
        {
          object: 'Date',
          property: 'now',
          message: 'Workflow code is replayed: use workflow time via sleep/condition, or pass time in.',
        },
        {
          object: 'Math',
          property: 'random',
          message:
            'Workflow code is replayed: use uuid4() from @temporalio/workflow; a definition is a pure function of the request.',
        },
      ],
    },
  },
  {
    // Definitions one folder down import the workflow modules beside them (../definition.js), nothing further up.
    files: ['workflows/definitions/**/*.ts'],
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
    // plain data, importing retrysafe by its package name only (not its own service).
    files: ['examples/*/operations.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!retrysafe-server/define$|\\./(?!service/)).*',
              message:
                'An operation definition is bundled into workflow code: import only retrysafe-server/define (and modules of its own folder).',
            },
          ],
        },
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
