import { startBrowserStack } from './stack';

/**
 * Starts the stack once for every browser test and hands its addresses to the tests through the
 * environment; the returned function stops it. Needs what `npm test` prepares: DATABASE_URL,
 * TEST_TEMPLATE_DB (the migrated template) and TEMPORAL_ADDRESS (its dev server, with the t-browser namespace).
 */
export default async function globalSetup(): Promise<() => Promise<void>> {
  for (const name of ['DATABASE_URL', 'TEST_TEMPLATE_DB', 'TEMPORAL_ADDRESS']) {
    if (!process.env[name]) throw new Error(`${name} is not set: run the browser tests through npm test (npm test -- test/browser/<file>.spec.ts)`);
  }
  const steps: Array<() => unknown> = [];
  const stack = await startBrowserStack({ after: (fn) => void steps.push(fn) });
  process.env.CONSOLE_URL = stack.url;
  process.env.CONSOLE_RECEIVER_URL = stack.receiverUrl;
  process.env.CONSOLE_DATABASE_URL = stack.databaseUrl;
  return async () => {
    for (const step of steps.reverse()) await Promise.resolve(step()).catch((err: Error) => console.error(`browser stack teardown: ${err.message}`));
  };
}
