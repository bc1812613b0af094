import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

// Work for Temporal is queued only through the verbs of lib/engine-starts.ts, which build each workflow start.
const outboxInserts = {
  group: ['**/db/repositories/outbox'],
  importNames: ['insertWorkflowStart', 'insertScheduleSync'],
  message: 'Queue work through a verb of lib/engine-starts.ts (startRun, startFire, startEventDispatch, …).',
};
// The engine and the shared library never reach into the HTTP layer: what both sides need lives in lib/.
const apiFromEngine = {
  group: ['**/api', '**/api/**', '!@opentelemetry/api'], // our api/, not OpenTelemetry's API package
  message: 'activities/, worker/ and lib/ must not import api/: move what is shared to lib/.',
};

// A bench is a small program over bench/kit/, runnable from a clean clone: it never reaches into the tests.
const testFromBench = {
  group: ['**/test', '**/test/**'],
  message: 'bench/ must not import test/: move what the bench needs into bench/kit/.',
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.data/**', '.scratch/**', 'web/dist/**', 'web/src/api/schema.d.ts', 'test-results/**', 'playwright-report/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    // The console runs in the browser: its globals and React's rules of hooks.
    files: ['web/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: reactHooks.configs.recommended.rules,
  },
  {
    files: ['**/*.ts'],
    ignores: ['lib/engine-starts.ts', 'web/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [outboxInserts] }] },
  },
  {
    files: ['activities/**/*.ts', 'worker/**/*.ts', 'lib/**/*.ts'],
    ignores: ['lib/engine-starts.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [apiFromEngine, outboxInserts] }] },
  },
  {
    // SQL lives in db/repositories; the engine calls repositories like the API does.
    files: ['activities/**/*.ts', 'worker/**/*.ts', 'lib/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression[callee.property.name='query']", message: 'SQL belongs in db/repositories/: call a repository.' },
      ],
    },
  },
  {
    files: ['bench/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [testFromBench, outboxInserts] }] },
  },
  {
    files: ['lib/engine-starts.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [apiFromEngine] }] },
  },
  {
    // Workflows are replayed: they must be deterministic. No Node built-ins, no I/O, no clock, no randomness;
    // activities are imported by type only (samples-typescript).
    files: ['workflows/**/*.ts'],
    languageOptions: { globals: {} },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Workflows are deterministic: no Node built-ins (do I/O in activities/).' })),
          patterns: [
            { group: ['**/activities', '**/activities/*'], allowTypeImports: true, message: 'Import activities with `import type` and proxyActivities.' },
            { group: ['**/db/*', '**/api/*', 'pg', 'fastify', 'undici', 'axios'], message: 'Workflows do no I/O.' },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'fetch', message: 'No I/O in workflows.' },
        { name: 'process', message: 'No process access in workflows.' },
        { name: 'setInterval', message: 'Use workflow sleep/condition.' },
        { name: 'crypto', message: 'No randomness in workflows; use uuid4() from @temporalio/workflow.' },
        { name: 'performance', message: 'No clock in workflows.' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'No clock in workflows; pass times in as arguments or use workflow APIs.' },
        { object: 'Math', property: 'random', message: 'No randomness in workflows; use uuid4() from @temporalio/workflow.' },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'No clock in workflows.' },
        { selector: "CallExpression[callee.name='Date']", message: 'No clock in workflows.' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
);
