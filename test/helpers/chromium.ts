// The browser lives in scripts/ (the test runner, the console's Playwright config and bench:console use it too).
export { CHROMIUM_ARGS, CHROMIUM_PATH, ensureChromium, launchChromium } from '../../scripts/chromium';
