// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import noUnawaitedPromiseVariable from './eslint-rules/no-unawaited-promise-variable.js';

/** Imports that would make workflow code non-deterministic or pull worker-only code into the sandbox. */
const workflowBannedImports = {
  paths: [
    { name: 'openai', message: 'Model calls run in activities; workflows see only ModelTurn data.' },
    { name: '@temporalio/activity', message: 'Activity APIs do not exist in the workflow sandbox.' },
    { name: '@temporalio/worker', message: 'Worker code does not belong in the workflow sandbox.' },
    { name: '@temporalio/client', message: 'Use @temporalio/workflow APIs inside workflows.' },
  ],
  patterns: [
    {
      group: ['node:*'],
      message: 'Node built-ins are I/O or non-deterministic; keep them out of workflows.',
    },
    {
      group: [
        'fs',
        'fs/*',
        'path',
        'os',
        'child_process',
        'http',
        'https',
        'net',
        'crypto',
        'process',
        'timers',
        'worker_threads',
      ],
      message: 'Node built-ins are I/O or non-deterministic; keep them out of workflows.',
    },
    {
      group: [
        '../activities/*',
        '../tools/*',
        '../model/*',
        '../safety/*',
        '../worker*',
        '../client*',
        '../config*',
      ],
      allowTypeImports: true,
      message: 'Workflows may import worker-side modules only as types.',
    },
  ],
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'test/fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: './tsconfig.check.json', tsconfigRootDir: import.meta.dirname },
    },
    plugins: { keel: { rules: { 'no-unawaited-promise-variable': noUnawaitedPromiseVariable } } },
    rules: {
      // `void p` only hides a promise: its rejection is still unhandled. Handle it (`.catch`) instead.
      '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: false }],
      '@typescript-eslint/no-misused-promises': 'error',
      'keel/no-unawaited-promise-variable': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        {
          object: 'TestWorkflowEnvironment',
          property: 'createLocal',
          message:
            'Use createLocalEnvironment (src/cli/dev-server.ts): the SDK gives a dev server 5 s, too few on a cold machine.',
        },
      ],
    },
  },
  {
    files: ['src/cli/dev-server.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    files: ['src/workflows/**/*.ts', 'src/contract/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', workflowBannedImports],
      'no-restricted-globals': [
        'error',
        {
          name: 'process',
          message: 'No environment in workflows: configuration arrives as input or activity results.',
        },
        { name: 'console', message: 'Use log from @temporalio/workflow (replay-aware).' },
        { name: 'fetch', message: 'I/O belongs in activities.' },
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'setInterval', message: 'Use sleep() in a loop from @temporalio/workflow.' },
      ],
      'no-restricted-properties': [
        'error',
        {
          object: 'Date',
          property: 'now',
          message: 'Time in workflows comes from the workflow clock; do not read it for logic.',
        },
        { object: 'Math', property: 'random', message: 'Use uuid4() or deterministic data in workflows.' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'new Date() reads the clock; keep it out of workflows.',
        },
      ],
    },
  },
  // JavaScript files (bin/keel.js, this config, the local rules) are outside the TypeScript project.
  {
    // Every run evaluates its workflow's modules again: workflow code checks values against plans
    // generated from the zod schemas (src/contract/value-check.ts), and a test fails if zod reaches
    // the workflow bundle through a contract module.
    files: ['src/workflows/**/*.ts'],
    ignores: ['src/workflows/schemas.ts', 'src/workflows/plan-sources.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'zod',
              allowTypeImports: true,
              message: 'Check values with check() and a plan of input-plans.ts: zod costs every run ~45 ms.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    rules: { ...tseslint.configs.disableTypeChecked.rules, 'keel/no-unawaited-promise-variable': 'off' },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
