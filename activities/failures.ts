import { ApplicationFailure } from '@temporalio/common';
import pg from 'pg';

/**
 * Which activity failures are worth retrying (docs/architecture.md § Limits and fairness: every activity's retries are bounded, and a
 * failure that would only repeat fails at once). Deterministic: the same input fails the same way —
 * Postgres refusing the data or the statement (SQLSTATE classes below) and JavaScript's own errors
 * (a TypeError on a malformed row, a RangeError, …). Everything else — the database or the network
 * unreachable, a serialization failure, a deadlock, a shutdown — may pass on the next attempt.
 */
const DETERMINISTIC_SQLSTATE_CLASSES = new Set([
  '0A', // feature not supported
  '21', // cardinality violation
  '22', // data exception (bad text representation, value out of range, invalid JSON, …)
  '23', // integrity constraint violation
  '2F', // SQL routine exception
  '42', // syntax error or access rule violation
  '54', // program limit exceeded (e.g. a value too large to index)
]);
const DETERMINISTIC_JS_ERRORS = new Set(['TypeError', 'RangeError', 'SyntaxError', 'ReferenceError', 'URIError', 'EvalError']);

export function isDeterministicFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof ApplicationFailure) return err.nonRetryable === true;
  // Postgres' answers carry their SQLSTATE; Node's system errors (ECONNREFUSED, …) are plain Errors: retried.
  if (err instanceof pg.DatabaseError) return DETERMINISTIC_SQLSTATE_CLASSES.has((err.code ?? '').slice(0, 2));
  return DETERMINISTIC_JS_ERRORS.has(err.constructor.name);
}

/** The error as Temporal should see it: a deterministic one becomes non-retryable, with its message and kind. */
export function classifyFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure || !isDeterministicFailure(err)) return err;
  const e = err as Error & { code?: string };
  return ApplicationFailure.create({ message: e.message, type: e.code ? `${e.constructor.name}:${e.code}` : e.constructor.name, nonRetryable: true, cause: e });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AsyncFunctions = Record<string, (...args: any[]) => Promise<unknown>>;

/** Wraps each activity so its deterministic failures are non-retryable (ApplicationFailure.nonRetryable). */
export function withFailureClassification<T extends AsyncFunctions>(activities: T): T {
  const wrapped: AsyncFunctions = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: unknown[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        throw classifyFailure(err);
      }
    };
  }
  return wrapped as T;
}
