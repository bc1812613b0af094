import { Alert } from '@mantine/core';
import { ApiError, describeError } from '../api/errors';

const TITLES: Record<number, string> = {
  400: 'Not accepted',
  401: 'Signed out',
  402: 'Balance too low',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict',
  413: 'Too large',
  422: 'Not accepted',
  429: 'Too many requests',
  502: 'A server it depends on failed',
};

/**
 * An error as the API said it: Mantine's Alert (role "alert") holding the API's `message`, so neither a
 * 403 nor a 402 nor a 429 is ever a blank screen. A 429 also says when to try again.
 */
export function ApiErrorAlert({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const status = error instanceof ApiError ? error.status : undefined;
  const message = describeError(error);
  // Retry-After is said once: not again when the API's message already says when to try again.
  const saysWhen = /\b(try again|retry) in\b/i.test(message);
  const retry = error instanceof ApiError && error.retryAfter && !saysWhen ? ` Try again in ${error.retryAfter} s.` : '';
  return (
    <Alert color={status && status < 500 ? 'orange' : 'red'} title={title ?? (status && TITLES[status]) ?? 'Something went wrong'} variant="light">
      {retry && !/[.!?]$/.test(message) ? `${message}.` : message}
      {retry}
    </Alert>
  );
}
