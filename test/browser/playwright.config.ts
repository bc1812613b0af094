import path from 'node:path';
import { defineConfig } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../helpers/chromium';

/**
 * The console's browser tests (docs/console.md § Tests): real Chromium (Debian's, never a download) against
 * the real stack the global set-up starts. `npm test` runs them after the node tests, sharing the Postgres
 * template and the Temporal dev server it prepared; run alone they need what it sets (see global-setup.ts).
 */
export default defineConfig({
  testDir: __dirname,
  testMatch: '*.spec.ts',
  // Two cores shared with the other tests: one browser at a time, generous time limits.
  workers: 1,
  fullyParallel: false,
  timeout: 90_000,
  expect: { timeout: 15_000 },
  retries: 0,
  reporter: [['list']],
  outputDir: path.join(__dirname, '..', '..', 'test-results', 'playwright'),
  globalSetup: path.join(__dirname, 'global-setup.ts'),
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS },
    viewport: { width: 1280, height: 860 },
    actionTimeout: 15_000,
    navigationTimeout: 30_000,
    screenshot: 'only-on-failure',
    trace: 'off',
    timezoneId: 'Europe/Paris',
    // No transitions: axe measures colours and names of what is on screen, not of a fade half-way.
    reducedMotion: 'reduce',
    locale: 'en-GB',
    // No transitions (the console respects reduced motion): axe measures what is on screen, not a fade.
    contextOptions: { reducedMotion: 'reduce' },
  },
});
