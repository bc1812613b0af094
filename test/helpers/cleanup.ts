import { after } from 'node:test';

/**
 * What the set-up helpers register their clean-up with: a test's own context (`t` of `it`), or
 * `suiteContext()` for what the tests of a describe share.
 */
export interface Cleanup {
  after(fn: () => unknown): void;
}

const stacks = new WeakMap<Cleanup, (() => unknown)[]>();

/**
 * Runs `fn` when `t` ends. Everything registered on one `t` goes in one stack, undone last first (an app
 * closes before its database is dropped) whatever order node:test runs its `after` hooks in; each step
 * runs even when another failed, and the first failure is reported. A set-up that fails half-way
 * undoes what it made and nothing else, so the set-up's own error is the one shown.
 */
export function onCleanup(t: Cleanup, fn: () => unknown): void {
  let stack = stacks.get(t);
  if (!stack) {
    const steps: (() => unknown)[] = [];
    stack = steps;
    stacks.set(t, steps);
    t.after(async () => {
      const errors: unknown[] = [];
      for (const step of steps.splice(0).reverse()) {
        try {
          await step();
        } catch (err) {
          errors.push(err);
        }
      }
      if (errors.length) throw errors.length === 1 ? errors[0] : new AggregateError(errors, 'clean-up failed');
    });
  }
  stack.push(fn);
}

/**
 * Called in a describe body: a `t` for the suite, whose clean-up runs once all its tests (and nested
 * suites) are done. Node 20's suite context (what a `before` hook gets) has no `after`, and node:test's
 * `after()` called inside a hook runs as soon as that hook ends.
 */
export function suiteContext(): Cleanup {
  const suite: Cleanup = { after: (fn) => after(fn) };
  // Registered now, while the describe body runs: on the suite, not on the hook that will set it up.
  onCleanup(suite, () => {});
  return suite;
}
