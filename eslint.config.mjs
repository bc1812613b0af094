import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

// Work for Temporal is queued only through the verbs of engine/outbox/starts.ts, which build each workflow start.
const outboxInserts = {
  group: ['**/db/repositories/outbox'],
  importNames: ['createOutboxInsertsRepository'],
  message:
    'Queue work through a verb of engine/outbox/starts.ts (startDelivery, startEventFire, startEventMatching, startRun, startRunWorkflow, startRecovery, startScheduleSync, signalApprovalDecided).',
};
// The engine and the shared library never reach into the HTTP layer: what both sides need lives in lib/.
const apiFromEngine = {
  group: ['**/api', '**/api/**', '!@opentelemetry/api'], // our api/, not OpenTelemetry's API package
  message: 'engine/, activities/, worker/ and lib/ must not import api/: move what is shared to lib/.',
};
// No layer imports upward. From the ground up: lib/ (shared utilities), db/ (SQL), engine/ (the effects),
// workflows/ and activities/ (Temporal's side of the engine), worker/ and api/ (the two processes).
// engine/contract.ts is the one module below db/ in engine/: plain data that db/ and workflows/ read too.
const upward = (layers, except = []) => ({
  regex: `^(\\.\\./)+(${except.map((e) => `(?!${e}$)`).join('')}(${layers.join('|')}))(/|$)`,
  message: 'A layer never imports one above it (lib < db < engine < workflows, activities < worker, api): move what is shared down.',
});
const fromLib = upward(['db', 'engine', 'workflows', 'activities', 'worker']);
const fromDb = upward(['engine', 'workflows', 'activities', 'worker'], ['engine/contract']);
const fromEngine = upward(['workflows', 'activities', 'worker']);
const fromActivities = upward(['workflows', 'worker']);

// The engine has one front door: api/, worker/ and activities/ import engine/index.ts and nothing under it
// (engine/index.ts re-exports the plain data and types they need).
const engineFrontDoor = {
  regex: '^(\\.\\./)+engine/(?!index$).+',
  message: 'Enter the engine through its front door: import from engine/ (engine/index.ts), not from a module under it.',
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
    // No import circles anywhere: a module that needs another's work takes it as a dependency
    // (engine/compose.ts wires the engine), and what two modules share moves down to a module both import.
    files: ['**/*.{ts,tsx,mts}'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.tsx', '.mts', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx', '.mts'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.tsx', '.mts', '.js', '.mjs', '.json'] })],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
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
    ignores: ['engine/outbox/starts.ts', 'web/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [outboxInserts] }] },
  },
  {
    files: ['lib/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [apiFromEngine, outboxInserts, fromLib] }] },
  },
  {
    files: ['db/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [apiFromEngine, fromDb] }] },
  },
  {
    files: ['engine/**/*.ts'],
    ignores: ['engine/outbox/starts.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [apiFromEngine, outboxInserts, fromEngine] }] },
  },
  {
    files: ['activities/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [apiFromEngine, outboxInserts, fromActivities, engineFrontDoor] }] },
  },
  {
    files: ['worker/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [apiFromEngine, outboxInserts, engineFrontDoor] }] },
  },
  {
    files: ['api/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [outboxInserts, engineFrontDoor] }] },
  },
  {
    // SQL lives in db/repositories; the engine calls repositories like the API does.
    files: ['engine/**/*.ts', 'activities/**/*.ts', 'worker/**/*.ts', 'lib/**/*.ts'],
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
    files: ['engine/outbox/starts.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [apiFromEngine, fromEngine] }] },
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
            {
              regex: '^(\\.\\./)+engine/(?!contract$|temporal/names$)',
              message: 'Workflows read only the engine\'s contract (engine/contract.ts) and Temporal names (engine/temporal/names.ts).',
            },
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
